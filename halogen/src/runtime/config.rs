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

/// Whether `HALOGEN_MPI_STATS=1` asks each rank of a distributed run to print what it sent
/// and received (see [`super::distributed::print_stats_if_asked`]).
///
/// ```
/// let on = std::env::var("HALOGEN_MPI_STATS").is_ok_and(|v| v.trim() == "1");
/// assert_eq!(halogen::runtime::config::mpi_stats_enabled(), on);
/// ```
pub fn mpi_stats_enabled() -> bool {
    std::env::var("HALOGEN_MPI_STATS").is_ok_and(|v| v.trim() == "1")
}

/// Where compiled code is cached (the JIT's libraries, the CUDA runtime's cubins):
/// `$HALOGEN_CACHE_DIR`, else `$XDG_CACHE_HOME/halogen`, else `$HOME/.cache/halogen`, else
/// a folder in the temporary directory.
///
/// ```
/// let d = halogen::runtime::config::cache_dir();
/// assert!(d.is_absolute() || d.is_relative());
/// ```
pub fn cache_dir() -> std::path::PathBuf {
    use std::path::PathBuf;
    let var = |n: &str| std::env::var_os(n).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = var("HALOGEN_CACHE_DIR") {
        return d;
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return d.join("halogen");
    }
    if let Some(h) = var("HOME") {
        return h.join(".cache").join("halogen");
    }
    std::env::temp_dir().join("halogen-cache")
}
