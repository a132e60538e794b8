//! The machine model the auto-scheduler plans for: cores, SIMD width and cache sizes
//! (the parameters of the cost model in Sioutas et al. 2019, sec. 4.2–4.3).

use crate::ir::Type;

/// What the auto-scheduler knows about the machine: how many threads to feed, how wide a
/// vector register is and how large each cache level is.
///
/// ```
/// use halogen::MachineParams;
/// use halogen::prelude::*;
/// let m = MachineParams::new(8, 32, 32 * 1024, 256 * 1024, 8 * 1024 * 1024);
/// assert_eq!(m.vector_lanes(Type::u16()), 16);
/// assert_eq!(m.vector_lanes(Type::f32()), 8);
/// let host = MachineParams::host();
/// assert!(host.cores >= 1 && host.vector_bytes >= 16);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MachineParams {
    /// Hardware threads to keep busy (the parallel loop needs at least this many iterations).
    pub cores: usize,
    /// Bytes in one SIMD vector to plan for (16 for SSE/NEON, 32 for AVX2; `host()` plans
    /// for 32 on AVX-512 machines too, see `host_vector_bytes`).
    pub vector_bytes: usize,
    /// Bytes in one cache line (tiles are a multiple of it along the innermost dimension).
    pub cache_line: usize,
    /// L1 data cache, bytes.
    pub l1: usize,
    /// L2 cache, bytes: the working set of values produced and consumed in one tile iteration.
    pub l2: usize,
    /// Last-level cache, bytes: the working set of a whole group of fused stages.
    pub llc: usize,
    /// For a GPU target, the GPU's parameters: `auto_schedule` then maps each group onto
    /// blocks and threads.
    pub gpu: Option<GpuParams>,
}

/// What the auto-scheduler plans for on a GPU.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GpuParams {
    /// The most threads a block may have.
    pub threads_per_block: usize,
    /// Bytes of shared (OpenCL local) memory a block may use.
    pub shared_memory: usize,
    /// The tile of threads a block computes: along x (a multiple of the warp, so a row of
    /// threads reads memory in whole segments), along y.
    pub tile: [usize; 2],
}

impl Default for GpuParams {
    /// What every current GPU allows: 256 threads (32 × 8) per block and 48 KiB of shared
    /// memory.
    fn default() -> Self {
        GpuParams { threads_per_block: 256, shared_memory: 48 << 10, tile: [32, 8] }
    }
}

impl MachineParams {
    /// Explicit values (a 64-byte cache line). Zero values are raised to 1.
    ///
    /// ```
    /// use halogen::MachineParams;
    /// let m = MachineParams::new(4, 16, 32 << 10, 512 << 10, 2 << 20);
    /// assert_eq!((m.cores, m.vector_bytes, m.cache_line), (4, 16, 64));
    /// ```
    pub fn new(cores: usize, vector_bytes: usize, l1: usize, l2: usize, llc: usize) -> MachineParams {
        MachineParams {
            cores: cores.max(1),
            vector_bytes: vector_bytes.max(1),
            cache_line: 64,
            l1: l1.max(1),
            l2: l2.max(1),
            llc: llc.max(1),
            gpu: None,
        }
    }

    /// This machine: the available parallelism, the widest SIMD extension the CPU has
    /// (AVX-512: 64 bytes, AVX2: 32, otherwise 16) and the cache sizes from
    /// `/sys/devices/system/cpu/cpu0/cache` (32 KiB / 1 MiB / 8 MiB where that is missing).
    ///
    /// ```
    /// use halogen::MachineParams;
    /// let m = MachineParams::host();
    /// assert!(m.l1 <= m.l2 && m.l2 <= m.llc);
    /// ```
    pub fn host() -> MachineParams {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let caches = read_sysfs_caches(std::path::Path::new("/sys/devices/system/cpu/cpu0/cache"));
        let l1 = caches.l1.unwrap_or(32 << 10);
        let l2 = caches.l2.unwrap_or(1 << 20).max(l1);
        let llc = caches.llc.unwrap_or(8 << 20).max(l2);
        MachineParams {
            cores,
            vector_bytes: host_vector_bytes(),
            cache_line: caches.line.unwrap_or(64),
            l1,
            l2,
            llc,
            gpu: None,
        }
    }

    /// The auto-scheduler's parameters for `target`: this machine's ([`MachineParams::host`]),
    /// and for a target with a GPU feature also a GPU's ([`GpuParams`]), so that
    /// `auto_schedule` writes a GPU schedule.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert!(MachineParams::for_target(&Target::host()).gpu.is_none());
    /// let gpu = MachineParams::for_target(&"host-opencl".parse().unwrap()).gpu.unwrap();
    /// assert!(gpu.tile[0] * gpu.tile[1] <= gpu.threads_per_block);
    /// ```
    pub fn for_target(target: &crate::target::Target) -> MachineParams {
        let mut m = MachineParams::host();
        if target.has_gpu_feature() {
            m.gpu = Some(GpuParams::default());
        }
        m
    }

    /// Lanes of a native vector of `ty` (at least 1): `vector_bytes / bytes(ty)`.
    ///
    /// ```
    /// use halogen::MachineParams;
    /// use halogen::prelude::*;
    /// let m = MachineParams::new(1, 64, 1, 1, 1);
    /// assert_eq!(m.vector_lanes(Type::u8()), 64);
    /// assert_eq!(m.vector_lanes(Type::f64()), 8);
    /// ```
    pub fn vector_lanes(&self, ty: Type) -> usize {
        (self.vector_bytes / ty.element().bytes().max(1)).max(1)
    }
}

impl Default for MachineParams {
    /// The host's parameters.
    fn default() -> Self {
        MachineParams::host()
    }
}

/// 32 bytes wherever AVX2 is, AVX-512 machines included: their 512-bit operations run as
/// two 256-bit halves (AMD Zen 4) or at a lower clock (Intel), which is why GCC and LLVM
/// prefer 256-bit vectors on every AVX-512 CPU they tune for. Measured here on a Zen 4,
/// 64-byte plans were slower on most apps (histogram equalization 1.3x).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn host_vector_bytes() -> usize {
    if std::arch::is_x86_feature_detected!("avx2") {
        32
    } else {
        16
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn host_vector_bytes() -> usize {
    16
}

#[derive(Default, Debug, PartialEq)]
struct Caches {
    l1: Option<usize>,
    l2: Option<usize>,
    llc: Option<usize>,
    line: Option<usize>,
}

/// Sizes as sysfs writes them: `48K`, `2048K`, `32M`, or plain bytes.
fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<usize>().ok().map(|n| n * mul).filter(|&n| n > 0)
}

fn read_sysfs_caches(dir: &std::path::Path) -> Caches {
    let mut out = Caches::default();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    let mut names: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    let mut best_level = 0;
    for p in names {
        if !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("index")) {
            continue;
        }
        let read = |f: &str| std::fs::read_to_string(p.join(f)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size")) else { continue };
        let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_size(&size)) else { continue };
        if kind.trim() == "Instruction" {
            continue;
        }
        if out.line.is_none() {
            out.line = read("coherency_line_size").and_then(|s| parse_size(&s));
        }
        match level {
            1 => out.l1 = Some(size),
            2 => out.l2 = Some(size),
            _ => {}
        }
        if level >= best_level {
            best_level = level;
            out.llc = Some(size);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("48K\n"), Some(48 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn sysfs_layout_is_read() {
        let dir = std::env::temp_dir().join(format!("halogen_caches_{}", std::process::id()));
        let mk = |i: u32, level: &str, kind: &str, size: &str| {
            let d = dir.join(format!("index{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("level"), level).unwrap();
            std::fs::write(d.join("type"), kind).unwrap();
            std::fs::write(d.join("size"), size).unwrap();
            std::fs::write(d.join("coherency_line_size"), "64\n").unwrap();
        };
        mk(0, "1\n", "Data\n", "48K\n");
        mk(1, "1\n", "Instruction\n", "32K\n");
        mk(2, "2\n", "Unified\n", "2048K\n");
        mk(3, "3\n", "Unified\n", "30720K\n");
        let c = read_sysfs_caches(&dir);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(c, Caches { l1: Some(48 << 10), l2: Some(2 << 20), llc: Some(30 << 20), line: Some(64) });
        assert_eq!(read_sysfs_caches(std::path::Path::new("/no/such/dir")), Caches::default());
    }

    #[test]
    fn lanes_never_zero() {
        let m = MachineParams::new(0, 4, 0, 0, 0);
        assert_eq!(m.cores, 1);
        assert_eq!(m.vector_lanes(Type::f64()), 1);
        assert_eq!(m.vector_lanes(Type::bool()), 4);
    }
}
