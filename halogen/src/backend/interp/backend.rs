//! The interpreter as a [`Backend`]: compiling keeps the lowered statement; each run binds
//! the checked arguments by name and executes it, counting stores and allocations.

use super::Interpreter;
use crate::backend::{Backend, Bindings, Executable, RunStats};
use crate::error::Result;
use crate::ir::Stmt;
use crate::lower::Lowered;
use crate::target::{Arch, Target};
use std::sync::Arc;

/// Runs `interp` targets.
#[derive(Debug)]
pub struct InterpBackend;

/// A lowered statement ready to interpret.
#[derive(Debug)]
pub struct Interpreted {
    stmt: Stmt,
}

impl Backend for InterpBackend {
    fn name(&self) -> &'static str {
        "interpreter"
    }

    fn runs(&self, target: &Target) -> bool {
        target.arch() == Arch::Interp
    }

    fn compile(&self, lowered: &Lowered, _target: &Target) -> Result<Arc<dyn Executable>> {
        Ok(Arc::new(Interpreted { stmt: lowered.stmt.clone() }))
    }
}

impl Executable for Interpreted {
    fn run(&self, bindings: Bindings<'_, '_>) -> Result<RunStats> {
        let mut interp = Interpreter::new();
        if let Some(c) = &bindings.communicator {
            interp.set_communicator(c.clone());
        }
        for (name, value) in bindings.shape_scalars() {
            interp.bind_scalar(&name, value);
        }
        for (name, value) in &bindings.params {
            interp.bind_scalar(name, value.clone());
        }
        for (name, raw) in &bindings.inputs {
            interp.bind_buffer(name, raw.ty, raw.bytes);
        }
        let output_names: Vec<_> = bindings.outputs.iter().map(|(n, _)| n.clone()).collect();
        for (name, raw) in bindings.outputs {
            interp.bind_buffer_mut(&name, raw.ty, raw.bytes);
        }
        interp.run(&self.stmt)?;
        let mut stats = RunStats::default();
        for (n, size) in interp.allocation_sizes() {
            stats.stores.insert(n.clone(), interp.store_count(&n));
            stats.allocations.insert(n, size);
        }
        for n in output_names {
            stats.stores.insert(n.clone(), interp.store_count(&n));
        }
        Ok(stats)
    }
}
