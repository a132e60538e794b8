//! What a pipeline is compiled for: an architecture, a set of features, and the facts of
//! the machine that generated code and the auto-scheduler plan for.
//!
//! A target is written as Halide writes one: the architecture, then features, joined by
//! `-`: `"host"`, `"host-fast_math"`, `"host-opencl"`, `"host-cuda-cuda_capability_90"`,
//! `"interp"`. [`Target`] parses such strings ([`std::str::FromStr`]) and prints them back
//! ([`std::fmt::Display`]), features in a fixed order, so a printed target parses to the same
//! target.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen::target::Feature;
//! let t: Target = "host-cuda-cuda_capability_90".parse().unwrap();
//! assert!(t.has_feature(Feature::Cuda) && t.has_gpu_feature());
//! assert_eq!(t.to_string(), "host-cuda-cuda_capability_90");
//! assert_eq!(t.cuda_capability(), Some(90));
//! let e = "host-avx9".parse::<Target>().unwrap_err().to_string();
//! assert!(e.contains("unknown feature 'avx9'") && e.contains("opencl"));
//! ```

pub mod machine;

pub use machine::{GpuParams, MachineParams};

use crate::error::{Error, Result};
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// Where the code of a target runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// The reference interpreter: every load and store checked; the oracle for every other
    /// back end. Written `interp`.
    Interp,
    /// Native code for the machine that compiles: generated C compiled by the system C
    /// compiler (`-march=native`). Written `host`.
    Host,
}

impl Arch {
    /// The name a target string uses.
    ///
    /// ```
    /// use halogen::target::Arch;
    /// assert_eq!(Arch::Host.name(), "host");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Arch::Interp => "interp",
            Arch::Host => "host",
        }
    }

    const ALL: [Arch; 2] = [Arch::Interp, Arch::Host];
}

/// An optional capability of a target. The names are Halide's where Halide has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    /// Floating-point contraction (`a * b + c` as a fused multiply-add), as Halide does by
    /// default; floats may then differ from the interpreter's in the last bits.
    /// Written `fast_math`.
    FastMath,
    /// GPU loops run as OpenCL C kernels. Written `opencl`.
    OpenCL,
    /// GPU loops run as CUDA C kernels. Written `cuda`.
    Cuda,
    /// The CUDA compute capability to compile kernels for, as major × 10 + minor (`90` for
    /// an H100). Written `cuda_capability_90`.
    CudaCapability(u32),
    /// Distributed loops run over MPI ranks. Written `mpi`.
    Mpi,
}

impl Feature {
    /// The features without a parameter, in the order a target prints them.
    const PLAIN: [Feature; 4] = [Feature::FastMath, Feature::OpenCL, Feature::Cuda, Feature::Mpi];

    /// Whether GPU loops of a target with this feature run on a device.
    ///
    /// ```
    /// use halogen::target::Feature;
    /// assert!(Feature::OpenCL.is_gpu() && !Feature::FastMath.is_gpu());
    /// ```
    pub fn is_gpu(self) -> bool {
        matches!(self, Feature::OpenCL | Feature::Cuda)
    }

    /// The feature's name in a target string.
    ///
    /// ```
    /// use halogen::target::Feature;
    /// assert_eq!(Feature::CudaCapability(86).name(), "cuda_capability_86");
    /// assert_eq!(Feature::FastMath.name(), "fast_math");
    /// ```
    pub fn name(self) -> String {
        match self {
            Feature::FastMath => "fast_math".into(),
            Feature::OpenCL => "opencl".into(),
            Feature::Cuda => "cuda".into(),
            Feature::CudaCapability(c) => format!("cuda_capability_{c}"),
            Feature::Mpi => "mpi".into(),
        }
    }

    fn parse(word: &str) -> Option<Feature> {
        if let Some(f) = Feature::PLAIN.into_iter().find(|f| f.name() == word) {
            return Some(f);
        }
        let digits = word.strip_prefix("cuda_capability_")?;
        // Two or three digits (`30` … `120`): major × 10 + minor.
        let ok = (2..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| digits.parse().ok()).flatten().filter(|&c| c >= 10).map(Feature::CudaCapability)
    }

    /// Every feature name a target string accepts, for error messages.
    fn known() -> String {
        let mut names: Vec<String> = Feature::PLAIN.iter().map(|f| f.name()).collect();
        names.insert(3, "cuda_capability_NN (e.g. cuda_capability_90)".into());
        names.join(", ")
    }
}

/// What a pipeline is compiled for: an [`Arch`], a set of [`Feature`]s and the machine's
/// facts ([`MachineParams`]: cores, vector width, cache sizes) that generated code and the
/// auto-scheduler plan for. See the [module documentation](self) for the string form.
///
/// Two targets are equal when their architecture, features and machine facts are.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::target::Feature;
/// let t = Target::host().with_feature(Feature::OpenCL);
/// assert_eq!(t, "host-opencl".parse().unwrap());
/// assert!(t.has_gpu_feature() && !Target::host().has_gpu_feature());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    arch: Arch,
    features: BTreeSet<Feature>,
    machine: MachineParams,
}

/// This machine's facts, detected once per process.
fn detected_machine() -> &'static MachineParams {
    static HOST: OnceLock<MachineParams> = OnceLock::new();
    HOST.get_or_init(MachineParams::host)
}

impl Target {
    /// The reference interpreter: every load and store checked; the oracle for every
    /// other back end.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert!(Target::interp().is_interp());
    /// ```
    pub fn interp() -> Target {
        Target { arch: Arch::Interp, features: BTreeSet::new(), machine: detected_machine().clone() }
    }

    /// Native code for this machine: generated C compiled by the system C compiler
    /// (`$HALOGEN_CC`, else `clang`, else `cc`), vectorized and multi-threaded; see
    /// [`crate::backend::jit`]. Its machine facts are detected on this machine.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(Target::host().to_string(), "host");
    /// ```
    pub fn host() -> Target {
        Target { arch: Arch::Host, features: BTreeSet::new(), machine: detected_machine().clone() }
    }

    /// The architecture.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// True for the interpreter target.
    pub fn is_interp(&self) -> bool {
        self.arch == Arch::Interp
    }

    /// This target with `feature` added. A CUDA capability replaces any other one.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen::target::Feature;
    /// let t = Target::host().with_feature(Feature::Cuda).with_feature(Feature::CudaCapability(80));
    /// assert_eq!(t.to_string(), "host-cuda-cuda_capability_80");
    /// ```
    pub fn with_feature(mut self, feature: Feature) -> Target {
        if let Feature::CudaCapability(_) = feature {
            self.features.retain(|f| !matches!(f, Feature::CudaCapability(_)));
        }
        self.features.insert(feature);
        self
    }

    /// This target without `feature`.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen::target::Feature;
    /// let t = Target::host().with_fast_math().without_feature(Feature::FastMath);
    /// assert_eq!(t, Target::host());
    /// ```
    pub fn without_feature(mut self, feature: Feature) -> Target {
        self.features.remove(&feature);
        self
    }

    /// Whether the target has `feature`.
    pub fn has_feature(&self, feature: Feature) -> bool {
        self.features.contains(&feature)
    }

    /// Whether the target runs GPU loops on a device (OpenCL or CUDA).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert!("host-cuda".parse::<Target>().unwrap().has_gpu_feature());
    /// ```
    pub fn has_gpu_feature(&self) -> bool {
        self.features.iter().any(|f| f.is_gpu())
    }

    /// The features, in the order the target prints them.
    pub fn features(&self) -> impl Iterator<Item = Feature> + '_ {
        self.features.iter().copied()
    }

    /// The CUDA compute capability asked for, if any.
    pub fn cuda_capability(&self) -> Option<u32> {
        self.features.iter().find_map(|f| match f {
            Feature::CudaCapability(c) => Some(*c),
            _ => None,
        })
    }

    /// This target, allowed to contract `a * b + c` into fused multiply-adds (as Halide
    /// does by default): `with_feature(Feature::FastMath)`. Float results may then differ
    /// from the interpreter's in the last bits; without it native code matches the
    /// interpreter bit for bit. The interpreter ignores it.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let t = Target::host().with_fast_math();
    /// assert!(t.fast_math() && !Target::host().fast_math());
    /// assert_eq!(t.to_string(), "host-fast_math");
    /// ```
    pub fn with_fast_math(self) -> Target {
        self.with_feature(Feature::FastMath)
    }

    /// Whether fused multiply-adds are allowed (see [`Target::with_fast_math`]).
    pub fn fast_math(&self) -> bool {
        self.has_feature(Feature::FastMath)
    }

    /// The machine facts code is generated for (detected on this machine unless replaced
    /// with [`Target::with_machine`]).
    pub fn machine(&self) -> &MachineParams {
        &self.machine
    }

    /// This target, planning for another machine's facts (cache sizes, vector width,
    /// cores) than the detected ones.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let m = MachineParams::new(4, 16, 32 << 10, 512 << 10, 4 << 20);
    /// let t = Target::host().with_machine(m.clone());
    /// assert_eq!(t.machine().llc, 4 << 20);
    /// ```
    pub fn with_machine(mut self, machine: MachineParams) -> Target {
        self.machine = machine;
        self
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.arch.name())?;
        for feature in &self.features {
            write!(f, "-{}", feature.name())?;
        }
        Ok(())
    }
}

impl FromStr for Target {
    type Err = Error;

    /// Parses `arch[-feature]*`. An unknown architecture or feature is an `Err` that lists
    /// the known ones.
    fn from_str(s: &str) -> Result<Target> {
        let mut words = s.trim().split('-');
        let arch_word = words.next().unwrap_or("");
        let Some(arch) = Arch::ALL.into_iter().find(|a| a.name() == arch_word) else {
            let known: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
            return Err(Error::Target(format!(
                "unknown architecture '{arch_word}' in target '{s}'; known architectures: {}",
                known.join(", ")
            )));
        };
        let mut target = if arch == Arch::Interp { Target::interp() } else { Target::host() };
        for word in words {
            let Some(feature) = Feature::parse(word) else {
                return Err(Error::Target(format!(
                    "unknown feature '{word}' in target '{s}'; known features: {}",
                    Feature::known()
                )));
            };
            if target.cuda_capability().is_some_and(|c| feature == Feature::CudaCapability(c)) {
                continue;
            }
            if matches!(feature, Feature::CudaCapability(_)) && target.cuda_capability().is_some() {
                return Err(Error::Target(format!("target '{s}' names more than one CUDA capability")));
            }
            target = target.with_feature(feature);
        }
        if arch == Arch::Interp && target.has_gpu_feature() {
            return Err(Error::Target(format!(
                "target '{s}': the interpreter runs GPU loops as ordinary loops only on a host target; \
                 use 'host-opencl' or 'host-cuda'"
            )));
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip() {
        for s in [
            "host",
            "interp",
            "host-fast_math",
            "host-opencl",
            "host-cuda",
            "host-cuda-cuda_capability_90",
            "host-fast_math-opencl-mpi",
            "interp-mpi",
        ] {
            let t: Target = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
            assert_eq!(t.to_string().parse::<Target>().unwrap(), t);
        }
    }

    #[test]
    fn features_print_in_a_fixed_order() {
        let t: Target = "host-mpi-cuda_capability_86-fast_math-cuda".parse().unwrap();
        assert_eq!(t.to_string(), "host-fast_math-cuda-cuda_capability_86-mpi");
    }

    #[test]
    fn bad_strings_are_errors_that_list_what_is_known() {
        let e = "gpu".parse::<Target>().unwrap_err().to_string();
        assert!(e.contains("unknown architecture 'gpu'") && e.contains("interp, host"), "{e}");
        let e = "host-fast-math".parse::<Target>().unwrap_err().to_string();
        assert!(e.contains("unknown feature 'fast'") && e.contains("fast_math"), "{e}");
        for bad in ["host-", "host-cuda_capability_9", "host-cuda_capability_x0", "host-cuda_capability_05"] {
            assert!(bad.parse::<Target>().is_err(), "{bad}");
        }
        let e = "host-cuda_capability_80-cuda_capability_90".parse::<Target>().unwrap_err().to_string();
        assert!(e.contains("more than one CUDA capability"), "{e}");
        assert!("interp-opencl".parse::<Target>().is_err());
    }

    #[test]
    fn builders_agree_with_strings() {
        assert_eq!(Target::host().with_fast_math(), "host-fast_math".parse().unwrap());
        assert_eq!(Target::interp(), "interp".parse().unwrap());
        let t = Target::host().with_feature(Feature::CudaCapability(70)).with_feature(Feature::CudaCapability(90));
        assert_eq!(t.cuda_capability(), Some(90));
        assert_eq!(t.machine(), detected_machine());
    }
}
