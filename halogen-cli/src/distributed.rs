//! The ranks a `distributed` schedule runs on: MPI's ranks when the binary is built with
//! the cargo feature `mpi` (`mpirun -np 4 halogen run blur in.png out.png --schedule
//! distributed`), or a run of one rank.

use crate::CliError;
use halogen::runtime::distributed::Communicator;
use std::sync::Arc;

/// This process's rank of a distributed run, for the length of the command.
pub struct Ranks {
    communicator: Arc<dyn Communicator>,
    #[cfg(feature = "mpi")]
    session: halogen::runtime::distributed::MpiSession,
}

/// The number of processes the MPI launcher started, if it started this one.
#[cfg(not(feature = "mpi"))]
fn launched_ranks() -> Option<i32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .and_then(|v| v.parse().ok())
}

impl Ranks {
    /// Joins the distributed run: MPI's world with the `mpi` feature; without it, a run of
    /// one rank, and an error when a launcher started several.
    pub fn join() -> Result<Ranks, CliError> {
        #[cfg(feature = "mpi")]
        {
            let session = halogen::runtime::distributed::MpiSession::init()?;
            Ok(Ranks { communicator: session.communicator(), session })
        }
        #[cfg(not(feature = "mpi"))]
        {
            if let Some(n) = launched_ranks().filter(|&n| n > 1) {
                return Err(CliError::new(format!(
                    "started as one of {n} MPI processes, but this halogen was built without MPI; build it with \
                     `cargo build --release -p halogen-cli --features mpi`"
                )));
            }
            Ok(Ranks { communicator: Arc::new(halogen::runtime::distributed::SingleRank) })
        }
    }

    /// This rank's communicator.
    pub fn communicator(&self) -> Arc<dyn Communicator> {
        self.communicator.clone()
    }

    /// `result`, or, on an error, the error printed by this rank and every rank ended: the
    /// other ranks may be waiting for this one in a border exchange, and must not hang.
    pub fn fail_together<T, E: Into<CliError>>(&self, result: Result<T, E>) -> Result<T, CliError> {
        let result = result.map_err(Into::into);
        #[cfg(feature = "mpi")]
        if let Err(e) = &result {
            if self.communicator.ranks() > 1 {
                eprintln!("halogen: error on rank {} of {}: {e}", self.communicator.rank(), self.communicator.ranks());
                self.session.abort(1);
            }
        }
        result
    }
}
