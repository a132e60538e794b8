//! Native code for the machine that compiles, as a [`Backend`]: the loop nest printed as C
//! by [`crate::backend::c`], compiled and loaded by [`crate::backend::jit`].

use crate::backend::jit::JitModule;
use crate::backend::{Backend, Bindings, Executable, RunStats};
use crate::error::Result;
use crate::lower::Lowered;
use crate::target::{Arch, Target};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Runs `host` targets.
#[derive(Debug)]
pub struct HostBackend;

impl Backend for HostBackend {
    fn name(&self) -> &'static str {
        "host C"
    }

    fn runs(&self, target: &Target) -> bool {
        target.arch() == Arch::Host
    }

    fn compile(&self, lowered: &Lowered, target: &Target) -> Result<Arc<dyn Executable>> {
        Ok(Arc::new(JitModule::compile_for(lowered, target)?))
    }

    fn compile_and_remember(
        &self,
        lowered: &Lowered,
        target: &Target,
        fingerprint: &str,
    ) -> Result<Arc<dyn Executable>> {
        let module = JitModule::compile_for(lowered, target)?;
        module.remember(fingerprint, target);
        Ok(Arc::new(module))
    }

    fn load_compiled(&self, fingerprint: &str, target: &Target) -> Option<Arc<dyn Executable>> {
        JitModule::recall(fingerprint, target).map(|m| Arc::new(m) as Arc<dyn Executable>)
    }
}

impl Executable for JitModule {
    fn run(&self, bindings: Bindings<'_, '_>) -> Result<RunStats> {
        let images: BTreeMap<_, _> = bindings.inputs.into_iter().collect();
        JitModule::run_on_rank(self, &images, &bindings.params, bindings.outputs, bindings.communicator)?;
        Ok(RunStats::default())
    }

    fn source(&self) -> Option<&str> {
        Some(JitModule::source(self))
    }
}
