//! Switches read from the environment that the runtime and the back ends both obey. They
//! live here, below the back ends, so that the runtime never reaches up into a back end.

/// Whether `HALOGEN_SANITIZE=1` asks for sanitizer builds: the JIT then compiles generated
/// code with AddressSanitizer and UndefinedBehaviorSanitizer, and the runtime's pooled
/// heap hands every block straight to `malloc` and `free`, so that AddressSanitizer sees
/// each block at its exact size.
///
/// ```
/// let on = std::env::var("HALOGEN_SANITIZE").is_ok_and(|v| v.trim() == "1");
/// assert_eq!(halogen::runtime::config::sanitize_enabled(), on);
/// ```
pub fn sanitize_enabled() -> bool {
    std::env::var("HALOGEN_SANITIZE").is_ok_and(|v| v.trim() == "1")
}
