//! The error type of every fallible operation.

use thiserror::Error as ThisError;

/// Everything that can go wrong, from a bad definition to a too-small buffer at run time.
/// Each message names the Func, buffer or directive involved and the numbers.
///
/// ```
/// use halogen::Error;
/// let e = Error::Schedule("Func 'f': split: no loop variable 'z'".into());
/// assert!(e.to_string().contains("split"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, ThisError)]
pub enum Error {
    /// A mistake in the algorithm (a bad definition, a type mismatch, a missing definition).
    #[error("definition error: {0}")]
    Definition(String),
    /// An invalid schedule directive.
    #[error("schedule error: {0}")]
    Schedule(String),
    /// The compiler could not bound a region (for example a data-dependent index).
    #[error("bounds error: {0}")]
    Bounds(String),
    /// A buffer given at run time does not match what the pipeline needs.
    #[error("buffer error: {0}")]
    Buffer(String),
    /// A missing or wrongly typed argument.
    #[error("argument error: {0}")]
    Argument(String),
    /// A target string or target feature that Halogen does not know, or a target that
    /// cannot run what the pipeline schedules.
    #[error("target error: {0}")]
    Target(String),
    /// A check in the generated code failed while the pipeline ran.
    #[error("runtime error: {0}")]
    Runtime(String),
    /// The native tool chain is missing or failed (no C compiler, a shared object that
    /// cannot be written or loaded); the message says what to install or set.
    #[error("back end error: {0}")]
    Backend(String),
    /// A bug in Halogen itself: the pass and an excerpt of the IR.
    #[error("internal error in {pass}: {message}")]
    Internal {
        /// The pass or component that failed.
        pass: String,
        /// What went wrong.
        message: String,
    },
}

/// Shorthand for results with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The same error with its message passed through `f` (an internal error's too).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Error {
        match self {
            Error::Definition(m) => Error::Definition(f(m)),
            Error::Schedule(m) => Error::Schedule(f(m)),
            Error::Bounds(m) => Error::Bounds(f(m)),
            Error::Buffer(m) => Error::Buffer(f(m)),
            Error::Argument(m) => Error::Argument(f(m)),
            Error::Target(m) => Error::Target(f(m)),
            Error::Runtime(m) => Error::Runtime(f(m)),
            Error::Backend(m) => Error::Backend(f(m)),
            Error::Internal { pass, message } => Error::Internal { pass, message: f(message) },
        }
    }

    /// An internal error raised by `pass`.
    pub fn internal(pass: &str, message: impl Into<String>) -> Error {
        Error::Internal { pass: pass.to_string(), message: message.into() }
    }
}
