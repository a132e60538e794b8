//! `Pipeline`, `Compiled`, `Target` and `Args`: compiling Funcs and running them.

use crate::backend::{self, Bindings, Executable};
use crate::error::{Error, Result};
use crate::ir::{Expr, Name, Stmt, Type};
use crate::lang::func::FuncRef;
use crate::lang::func::{explain_internal_names, Func};
use crate::lang::param::{ImageParam, Param};
use crate::lower::distribute;
use crate::lower::environment::Environment;
use crate::lower::lower::{finish_lowering, passes_are_watched, schedule};
use crate::lower::{lower, Lowered, Scheduled};
use crate::runtime::distributed::{Communicator, SingleRank};
use crate::runtime::gpu::device_buffer::{download, target_api, write_from, DeviceMemory};
use crate::runtime::gpu::DeviceBuffer;
use crate::runtime::{Buffer, Element, RawBuffer, RawBufferMut};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

pub use crate::backend::RunStats;
pub use crate::target::Target;

/// The outputs of a pipeline, ready to compile.
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// let f = Func::new("f");
/// f.def(x, x * x);
/// let p = Pipeline::new(&[&f]);
/// let c = p.compile(&Target::interp()).unwrap();
/// let mut out = Buffer::<i32>::new(&[5]);
/// c.realize(&Args::new(), &mut out).unwrap();
/// assert_eq!(out.as_slice(), &[0, 1, 4, 9, 16]);
/// ```
#[derive(Clone, Debug)]
pub struct Pipeline {
    outputs: Vec<Func>,
}

impl Pipeline {
    /// A pipeline computing `outputs`.
    pub fn new(outputs: &[&Func]) -> Pipeline {
        Pipeline { outputs: outputs.iter().map(|f| (*f).clone()).collect() }
    }

    /// The output Funcs.
    pub fn outputs(&self) -> &[Func] {
        &self.outputs
    }

    /// Lowers the pipeline for `target` and prepares it on the back end that runs that
    /// target ([`crate::backend::select`]). Definition and schedule mistakes come back here
    /// as `Err`, naming the Func and the directive.
    ///
    /// A pipeline compiled before (by this process or another of the same build), whose
    /// schedule and definitions have not changed since, is found by its fingerprint
    /// ([`crate::lower::Scheduled::fingerprint`]) where the back end keeps compiled code,
    /// without running the passes after scheduling; they run on demand if the final nest is
    /// asked for ([`Compiled::lowered_stmt`], [`Compiled::compile_to_c`]).
    pub fn compile(&self, target: &Target) -> Result<Compiled> {
        let explain = |e: Error| e.map_message(explain_internal_names);
        let scheduled = schedule(&self.func_refs()?, target).map_err(explain)?;
        let backend = backend::select_for_nest(target, &scheduled.stmt).map_err(explain)?;
        let fingerprint = (!passes_are_watched()).then(|| scheduled.fingerprint(target));
        if let Some(executable) = fingerprint.as_deref().and_then(|f| backend.load_compiled(f, target)) {
            return Ok(Compiled {
                program: Arc::new(Program::scheduled(scheduled)),
                target: target.clone(),
                executable,
            });
        }
        let lowered = finish_lowering(scheduled).map_err(explain)?;
        let executable = match &fingerprint {
            Some(f) => backend.compile_and_remember(&lowered, target, f),
            None => backend.compile(&lowered, target),
        }
        .map_err(explain)?;
        Ok(Compiled { program: Arc::new(Program::lowered(lowered)), target: target.clone(), executable })
    }

    /// Lowers the pipeline for `target` without compiling it.
    pub fn lower(&self, target: &Target) -> Result<Lowered> {
        lower(&self.func_refs()?, target).map_err(|e| e.map_message(explain_internal_names))
    }

    fn func_refs(&self) -> Result<Vec<FuncRef>> {
        if self.outputs.is_empty() {
            return Err(Error::Definition("a pipeline needs at least one output Func".into()));
        }
        Ok(self.outputs.iter().map(|f| f.func_ref().clone()).collect())
    }
}

/// Values for a pipeline's inputs: images for `ImageParam`s and scalars for `Param`s.
///
/// ```
/// use halogen::prelude::*;
/// let input = ImageParam::new(Type::u8(), 1, "in");
/// let gain = Param::<u8>::new("gain");
/// let x = Var::new("x");
/// let f = Func::new("scaled");
/// f.def(x, input.at(x) * gain.expr());
/// let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
/// let img = Buffer::<u8>::from_vec(vec![1, 2, 3], &[3]).unwrap();
/// let mut args = Args::new();
/// args.image(&input, &img).param(&gain, 3);
/// let mut out = Buffer::<u8>::new(&[3]);
/// c.realize(&args, &mut out).unwrap();
/// assert_eq!(out.as_slice(), &[3, 6, 9]);
/// ```
#[derive(Default)]
pub struct Args<'a> {
    images: BTreeMap<Name, RawBuffer<'a>>,
    params: BTreeMap<Name, Expr>,
    communicator: Option<Arc<dyn Communicator>>,
    global_outputs: BTreeMap<Name, Vec<(i32, i32)>>,
    global_inputs: BTreeMap<Name, Vec<(i32, i32)>>,
}

impl<'a> Args<'a> {
    /// No bindings yet.
    pub fn new() -> Args<'a> {
        Args::default()
    }

    /// Binds an input image.
    pub fn image<T: Element>(&mut self, param: &ImageParam, buffer: &'a Buffer<T>) -> &mut Self {
        self.images.insert(param.name(), buffer.raw());
        self
    }

    /// Binds an input image held in device memory (see [`DeviceBuffer`]): a run on that
    /// GPU whose host code does not read the input uses the memory as it is; any other run
    /// copies it to the host first.
    pub fn device_image<T: Element>(&mut self, param: &ImageParam, buffer: &'a DeviceBuffer<T>) -> &mut Self {
        self.images.insert(param.name(), buffer.raw());
        self
    }

    /// Binds a scalar parameter.
    pub fn param<T: Element>(&mut self, param: &Param<T>, value: T) -> &mut Self {
        self.params.insert(param.name(), scalar_expr(value));
        self
    }

    /// The ranks a distributed pipeline (one with `distribute`d loops) runs on: this
    /// process's rank and the others it exchanges borders with. Without one, a distributed
    /// pipeline runs as rank 0 of 1 and computes everything itself; other pipelines ignore
    /// it. See [`crate::runtime::distributed`] for MPI and in-process ranks.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen::runtime::distributed::InProcessRanks;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let f = Func::new("doc_ranks_f");
    /// f.def((x, y), x * 10 + y);
    /// f.distribute(y);
    /// let c = Pipeline::new(&[&f]).compile(&"interp-mpi".parse().unwrap()).unwrap();
    /// // Three ranks, each computing its third of the rows into the same shape of buffer.
    /// let sums = InProcessRanks::run(3, |comm| {
    ///     let rank = comm.rank();
    ///     let mut out = Buffer::<i32>::new(&[4, 6]);
    ///     let mut args = Args::new();
    ///     args.communicator(comm);
    ///     c.realize(&args, &mut out).unwrap();
    ///     (rank, out[[1, 2 * rank]])
    /// });
    /// assert_eq!(sums, vec![(0, 10), (1, 12), (2, 14)]);
    /// ```
    pub fn communicator(&mut self, communicator: Arc<dyn Communicator>) -> &mut Self {
        self.communicator = Some(communicator);
        self
    }

    /// The whole region (`(min, extent)` per dimension) of the distributed output `output`,
    /// whose buffer on this rank then holds only the slice the rank computes: each rank
    /// allocates its slice, not the image. Without it, an output's buffer is its whole
    /// region on every rank. A buffer that does not cover what the rank computes is an
    /// `Err` naming both.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen::runtime::distributed::InProcessRanks;
    /// use halogen::runtime::gather::block_slice;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let f = Func::new("doc_slices_f");
    /// f.def((x, y), x * 10 + y);
    /// f.distribute(y);
    /// let c = Pipeline::new(&[&f]).compile(&"host-mpi".parse().unwrap()).unwrap();
    /// // Each of 3 ranks holds its rows of a 4 × 7 output, and nothing else.
    /// let rows = InProcessRanks::run(3, |comm| {
    ///     let (lo, hi) = block_slice(7, comm.rank(), comm.ranks());
    ///     let mut mine = Buffer::<i32>::with_min(&[0, lo], &[4, hi - lo]);
    ///     let mut args = Args::new();
    ///     args.communicator(comm).global_output(&f, &[(0, 4), (0, 7)]);
    ///     c.realize(&args, &mut mine).unwrap();
    ///     (lo, mine[[3, lo]])
    /// });
    /// assert_eq!(rows, vec![(0, 30), (3, 33), (6, 36)]);
    /// ```
    pub fn global_output(&mut self, output: &Func, region: &[(i32, i32)]) -> &mut Self {
        self.global_outputs.insert(output.name(), region.to_vec());
        self
    }

    /// The whole region (`(min, extent)` per dimension) of the distributed input `input`
    /// ([`ImageParam::distribute`]), whose buffer on this rank holds only the rank's block
    /// (see the example there). Without it, the input's buffer is the whole image on every
    /// rank.
    pub fn global_input(&mut self, input: &ImageParam, region: &[(i32, i32)]) -> &mut Self {
        self.global_inputs.insert(input.name(), region.to_vec());
        self
    }

    /// These bindings with every input image in host memory copied to the GPU of `target`
    /// once (images already in device memory stay as they are), for runs that should not
    /// copy their inputs each time: bind [`UploadedArgs::args`] instead.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 1, "doc_upload_in");
    /// let img = Buffer::<u8>::from_vec(vec![1, 2, 3], &[3]).unwrap();
    /// let mut args = Args::new();
    /// args.image(&input, &img);
    /// // A target without a GPU is an `Err` that says so.
    /// let e = args.upload(&Target::host()).unwrap_err().to_string();
    /// assert!(e.contains("has no GPU"), "{e}");
    /// ```
    pub fn upload(&self, target: &Target) -> Result<UploadedArgs<'a>> {
        let mut images = BTreeMap::new();
        let mut memory = Vec::new();
        for (name, raw) in &self.images {
            let view = match raw.device {
                Some(_) => raw.clone(),
                None => {
                    let (m, view) = DeviceMemory::upload(raw, target)?;
                    memory.push(m);
                    view
                }
            };
            images.insert(name.clone(), view);
        }
        Ok(UploadedArgs {
            images,
            params: self.params.clone(),
            communicator: self.communicator.clone(),
            global_outputs: self.global_outputs.clone(),
            global_inputs: self.global_inputs.clone(),
            _memory: memory,
        })
    }
}

/// Bindings whose input images were copied to a GPU by [`Args::upload`]; the copies are
/// freed when this is dropped, and device images bound before the upload stay borrowed for
/// `'a`.
#[derive(Debug)]
pub struct UploadedArgs<'a> {
    images: BTreeMap<Name, RawBuffer<'a>>,
    params: BTreeMap<Name, Expr>,
    communicator: Option<Arc<dyn Communicator>>,
    global_outputs: BTreeMap<Name, Vec<(i32, i32)>>,
    global_inputs: BTreeMap<Name, Vec<(i32, i32)>>,
    _memory: Vec<DeviceMemory>,
}

impl UploadedArgs<'_> {
    /// The bindings, to pass to a run.
    pub fn args(&self) -> Args<'_> {
        Args {
            images: self.images.clone(),
            params: self.params.clone(),
            communicator: self.communicator.clone(),
            global_outputs: self.global_outputs.clone(),
            global_inputs: self.global_inputs.clone(),
        }
    }
}

/// The constant expression of a value of an element type.
pub(crate) fn scalar_expr<T: Element>(v: T) -> Expr {
    let b = bytemuck::bytes_of(&v);
    let t = T::TYPE;
    let mut raw = [0u8; 8];
    raw[..b.len()].copy_from_slice(b);
    let bits = u64::from_ne_bytes(raw);
    if t.is_float() {
        let x = if t.bits == 32 { f32::from_bits(bits as u32) as f64 } else { f64::from_bits(bits) };
        Expr::float_imm(t, x)
    } else {
        // Sign-extend signed types; wrap_int does the rest.
        let v = match (t.is_int(), t.bits) {
            (true, 8) => bits as u8 as i8 as i64,
            (true, 16) => bits as u16 as i16 as i64,
            (true, 32) => bits as u32 as i32 as i64,
            _ => bits as i64,
        };
        Expr::int_imm(t, v)
    }
}

/// A compiled pipeline: reusable, and safe to share between threads.
#[derive(Clone, Debug)]
pub struct Compiled {
    program: Arc<Program>,
    target: Target,
    /// What the target's back end made of it.
    executable: Arc<dyn Executable>,
}

/// The pipeline a [`Compiled`] runs: its environment, and its final loop nest, lowered on
/// demand when the compiled code came from a cache.
#[derive(Debug)]
struct Program {
    nest: Nest,
    /// Which buffers the final nest's host code touches, once a run with device buffers
    /// asks (`None` if the nest could not be had).
    host_access: OnceLock<Option<crate::backend::gpu::HostAccess>>,
}

#[derive(Debug)]
enum Nest {
    /// Lowered by this compile.
    Final(Lowered),
    /// Found in a cache: the nest after scheduling, and the final one once asked for.
    Pending { scheduled: Box<Scheduled>, lowered: OnceLock<Result<Lowered>> },
}

impl Program {
    fn lowered(lowered: Lowered) -> Program {
        Program { nest: Nest::Final(lowered), host_access: OnceLock::new() }
    }

    fn scheduled(scheduled: Scheduled) -> Program {
        Program {
            nest: Nest::Pending { scheduled: Box::new(scheduled), lowered: OnceLock::new() },
            host_access: OnceLock::new(),
        }
    }

    /// Whether host code of the final nest reads or writes buffer `name` (true when the nest
    /// cannot be had: a run then keeps the buffer on the host, which is always right).
    fn host_touches(&self, name: &Name) -> bool {
        let access = self
            .host_access
            .get_or_init(|| self.final_nest().ok().map(|l| crate::backend::gpu::HostAccess::of(&l.stmt)));
        access.as_ref().is_none_or(|a| a.host_touches(name))
    }

    /// The environment (what `realize` binds): lowering leaves it as scheduling made it.
    fn env(&self) -> &Environment {
        match &self.nest {
            Nest::Final(l) => &l.env,
            Nest::Pending { scheduled, .. } => &scheduled.env,
        }
    }

    /// The final nest, lowering it now if the code came from a cache (it lowered before, in
    /// the process that filled the cache, so an error here would be the compiler's own).
    fn final_nest(&self) -> Result<&Lowered> {
        match &self.nest {
            Nest::Final(l) => Ok(l),
            Nest::Pending { scheduled, lowered } => lowered
                .get_or_init(|| {
                    finish_lowering(Scheduled::clone(scheduled)).map_err(|e| e.map_message(explain_internal_names))
                })
                .as_ref()
                .map_err(Clone::clone),
        }
    }
}

impl Compiled {
    /// The final loop nest (print it with `{}`). Where the compiled code came from the
    /// cache, the nest is lowered now; should that fail (it lowered before), this is the
    /// nest after scheduling.
    pub fn lowered_stmt(&self) -> &Stmt {
        match (&self.program.nest, self.program.final_nest()) {
            (_, Ok(l)) => &l.stmt,
            (Nest::Pending { scheduled, .. }, Err(_)) => &scheduled.stmt,
            (Nest::Final(l), Err(_)) => &l.stmt,
        }
    }

    /// The generated C of a host target (`None` for the interpreter); see
    /// [`Compiled::compile_to_c`] for any target.
    pub fn c_source(&self) -> Option<&str> {
        self.executable.source()
    }

    /// Writes the pipeline as C for ahead-of-time builds: `path` (the `.c` file) and the
    /// header beside it (`.h`), with a C ABI entry point named after the file's stem; see
    /// [`crate::backend::aot`].
    pub fn compile_to_c(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        crate::backend::aot::compile_to_c(self.program.final_nest()?, path.as_ref(), &self.target)
    }

    /// Builds the pipeline into `dir/lib<name>.a` and `dir/<name>.h` with the C ABI entry
    /// point `name`; see [`crate::backend::aot`].
    pub fn compile_to_static_library(&self, dir: impl AsRef<std::path::Path>, name: &str) -> Result<()> {
        crate::backend::aot::compile_to_static_library(self.program.final_nest()?, dir.as_ref(), name, &self.target)
    }

    /// The GPU kernels' source (OpenCL C or CUDA C) of a GPU target, which the generated C
    /// carries; `None` for a target without a GPU feature.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let x = Var::new("x");
    /// let f = Func::new("f");
    /// f.def(x, x * 2);
    /// f.gpu_tile_1d(x, Var::new("xo"), Var::new("xi"), 64);
    /// let c = Pipeline::new(&[&f]).compile(&"host-cuda".parse().unwrap()).unwrap();
    /// assert!(c.kernel_source().unwrap().unwrap().contains("__global__ void f_kernel_0("));
    /// ```
    pub fn kernel_source(&self) -> Result<Option<String>> {
        if !self.target.has_gpu_feature() {
            return Ok(None);
        }
        Ok(crate::backend::c::generate(self.program.final_nest()?, "pipeline", &self.target)?.kernel_source)
    }

    /// The target it was compiled for.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Names of the pipeline's outputs.
    pub fn outputs(&self) -> &[Name] {
        &self.program.env().outputs
    }

    /// Computes the output over the region `out` covers (its mins and extents).
    pub fn realize<T: Element>(&self, args: &Args<'_>, out: &mut Buffer<T>) -> Result<()> {
        self.realize_with_stats(args, out).map(|_| ())
    }

    /// Computes every output of the pipeline, each over the region its buffer covers:
    /// one buffer per output Func in the order [`Pipeline::new`] was given them, and one
    /// per value for a Func with tuple values (Halide's `Realization`). The buffers of one
    /// tuple-valued Func must have the same shape; different Funcs' may differ. A
    /// [`DeviceBuffer`] among them is written as [`Compiled::realize_to_device`] writes one.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let x = Var::new("x");
    /// // Two outputs, one of them with two values.
    /// let squares = Func::new("doc_squares");
    /// squares.def(x, x * x);
    /// let halves = Func::new("doc_halves");
    /// halves.def_tuple(x, &[Expr::from(x) / 2, cast(Type::u8(), Expr::from(x) % 2)]);
    /// let c = Pipeline::new(&[&squares, &halves]).compile(&Target::interp()).unwrap();
    /// let mut sq = Buffer::<i32>::new(&[5]);
    /// let (mut quotient, mut remainder) = (Buffer::<i32>::new(&[3]), Buffer::<u8>::new(&[3]));
    /// c.realize_outputs(&Args::new(), &mut [&mut sq, &mut quotient, &mut remainder]).unwrap();
    /// assert_eq!(sq.as_slice(), &[0, 1, 4, 9, 16]);
    /// assert_eq!(quotient.as_slice(), &[0, 0, 1]);
    /// assert_eq!(remainder.as_slice(), &[0, 1, 0]);
    /// ```
    pub fn realize_outputs(&self, args: &Args<'_>, outs: &mut [&mut dyn OutputBuffer]) -> Result<()> {
        self.run(args, outs.iter_mut().map(|o| o.output_view()).collect()).map(|_| ())
    }

    /// Like [`Compiled::realize`], and reports what the interpreter stored and allocated
    /// (other back ends report nothing).
    pub fn realize_with_stats<T: Element>(&self, args: &Args<'_>, out: &mut Buffer<T>) -> Result<RunStats> {
        self.run(args, vec![out.raw_mut()])
    }

    /// Computes the output into device memory, over the region `out` covers, and leaves it
    /// there: a GPU pipeline whose kernels write the output stores it in `out` directly, so a
    /// chain of GPU pipelines passes its images with [`Args::device_image`] and no copies to
    /// and from the host. Where the pipeline's host code writes the output, or the target has
    /// no GPU of `out`'s API, the output is computed on the host and copied up after the run.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen::DeviceBuffer;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
    /// let input = ImageParam::new(Type::u8(), 2, "doc_device_in");
    /// let f = Func::new("doc_device_f");
    /// f.def((x, y), input.at((x, y)) / 2);
    /// f.gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
    /// let target: Target = "host-opencl".parse().unwrap();
    /// let c = Pipeline::new(&[&f]).compile(&target).unwrap();
    /// let host = Buffer::<u8>::from_fn(&[40, 20], |c| (c[0] * 3 + c[1]) as u8);
    /// // No OpenCL device here is an `Err` that names what is missing.
    /// if let (Ok(img), Ok(mut out)) = (DeviceBuffer::from_host(&host, &target), DeviceBuffer::<u8>::new(&target, &[40, 20])) {
    ///     let mut args = Args::new();
    ///     args.device_image(&input, &img);
    ///     c.realize_to_device(&args, &mut out).unwrap();
    ///     let back = out.to_host().unwrap();
    ///     assert_eq!(back[[5, 3]], host[[5, 3]] / 2);
    /// }
    /// ```
    pub fn realize_to_device<T: Element>(&self, args: &Args<'_>, out: &mut DeviceBuffer<T>) -> Result<()> {
        self.run(args, vec![out.raw_mut()]).map(|_| ())
    }

    /// Runs over `args` into `outs` (one buffer per output value, in the pipeline's
    /// order), giving host copies to the device buffers the run cannot use where they are
    /// ([`Compiled::stays_on_device`]).
    fn run(&self, args: &Args<'_>, outs: Vec<RawBufferMut<'_>>) -> Result<RunStats> {
        let env = self.program.env();
        let out_names: Vec<Name> = env.outputs.iter().flat_map(|o| env.funcs[o].buffer_names()).collect();
        if outs.len() != out_names.len() {
            let names: Vec<String> = out_names.iter().map(|n| format!("'{n}'")).collect();
            let how = if out_names.len() == 1 { "realize" } else { "realize_outputs" };
            return Err(Error::Argument(format!(
                "this pipeline writes {} output buffers ({}); {} were given (use {how})",
                out_names.len(),
                names.join(", "),
                outs.len()
            )));
        }
        let staged_inputs = args
            .images
            .iter()
            .filter_map(|(name, raw)| Some((name, raw, raw.device?)))
            .filter(|&(name, _, d)| !self.stays_on_device(name, d))
            .map(|(name, raw, d)| Ok((name.clone(), download(d, raw.ty.bytes())?)))
            .collect::<Result<Vec<(Name, Vec<u8>)>>>()?;
        let mut images: BTreeMap<Name, RawBuffer<'_>> = args.images.clone();
        for (name, bytes) in &staged_inputs {
            let raw = images.get_mut(name).expect("staged from these images");
            raw.bytes = bytes;
            raw.device = None;
        }
        // Outputs in device memory the run cannot write in place are computed into host
        // memory and copied up afterwards.
        let staged: Vec<Option<(crate::runtime::DeviceRef, usize)>> = outs
            .iter()
            .zip(&out_names)
            .map(|(o, name)| o.device.filter(|&d| !self.stays_on_device(name, d)).map(|d| (d, o.ty.bytes())))
            .collect();
        let mut host_copies: Vec<Vec<u8>> =
            staged.iter().map(|s| s.map_or_else(Vec::new, |(d, bytes)| vec![0u8; d.len * bytes])).collect();
        let outs: Vec<RawBufferMut<'_>> = outs
            .into_iter()
            .zip(host_copies.iter_mut())
            .zip(&staged)
            .map(|((o, host), s)| match s {
                Some(_) => RawBufferMut { ty: o.ty, dims: o.dims, bytes: host, device: None },
                None => o,
            })
            .collect();
        let distributed = env.params.contains_key(distribute::RANK);
        let communicator: Arc<dyn Communicator> = args.communicator.clone().unwrap_or_else(|| Arc::new(SingleRank));
        let mut params = args.params.clone();
        if distributed {
            distribution_params(env, &communicator, &outs, &images, args, &mut params)?;
        }
        let mut bindings = Bindings::check(env, &images, &params, outs)?;
        if distributed {
            bindings.communicator = Some(communicator.clone());
        }
        let stats = self.executable.run(bindings).map_err(|e| e.map_message(explain_internal_names))?;
        if distributed {
            crate::runtime::distributed::print_stats_if_asked(&*communicator);
        }
        for (s, host) in staged.iter().zip(&host_copies) {
            if let Some((d, bytes)) = s {
                write_from(*d, *bytes, host)?;
            }
        }
        Ok(stats)
    }

    /// Whether this pipeline's run can use entry buffer `name` in device memory `d` as it
    /// is: the target runs kernels on `d`'s API and no host code of the pipeline reads or
    /// writes the buffer.
    fn stays_on_device(&self, name: &Name, d: crate::runtime::DeviceRef) -> bool {
        target_api(&self.target) == Some(d.api) && !self.program.host_touches(name)
    }
}

/// Binds the run-time values of a distributed pipeline: the rank, the number of ranks and
/// the grids of ranks from `communicator`, and the whole region of each distributed output
/// and input (`b.global.min.d`, `b.global.extent.d`): the region [`Args::global_output`] or
/// [`Args::global_input`] gave, else the shape of its buffer, which then holds all of it on
/// every rank.
fn distribution_params(
    env: &crate::lower::environment::Environment,
    communicator: &Arc<dyn Communicator>,
    outs: &[RawBufferMut<'_>],
    images: &BTreeMap<Name, RawBuffer<'_>>,
    args: &Args<'_>,
    params: &mut BTreeMap<Name, Expr>,
) -> Result<()> {
    for (name, what) in
        args.global_outputs.keys().map(|n| (n, "output")).chain(args.global_inputs.keys().map(|n| (n, "input")))
    {
        if !env.params.contains_key(&distribute::global_region_param(name, "min", 0)) {
            return Err(Error::Argument(format!(
                "global_{what}: '{name}' is not a distributed {what} of this pipeline"
            )));
        }
    }
    let ranks = communicator.ranks();
    params.insert(distribute::RANK.into(), Expr::i32(communicator.rank() as i64));
    params.insert(distribute::RANKS.into(), Expr::i32(ranks as i64));
    for n in 2..=3 {
        for (i, extent) in distribute::grid_shape(n, ranks).into_iter().enumerate() {
            params.insert(distribute::grid_param(n, i), Expr::i32(extent as i64));
        }
    }
    // Every buffer with a whole region, with the region its caller gave and its own shape.
    type Region = Vec<(i32, i32)>;
    let mut buffers: Vec<(&Name, Option<&Region>, Region)> = Vec::new();
    let mut out_views = outs.iter();
    for o in &env.outputs {
        let f = &env.funcs[o];
        let first = out_views.next();
        // A tuple's other buffers share the first one's shape.
        for _ in 1..f.types.len() {
            out_views.next();
        }
        if let Some(first) = first {
            buffers.push((o, args.global_outputs.get(o), first.dims.iter().map(|d| (d.min, d.extent)).collect()));
        }
    }
    for (name, raw) in images {
        buffers.push((name, args.global_inputs.get(name), raw.dims.iter().map(|d| (d.min, d.extent)).collect()));
    }
    for (name, given, own) in buffers {
        if !env.params.contains_key(&distribute::global_region_param(name, "min", 0)) {
            continue;
        }
        let region = match given {
            Some(r) if r.len() != own.len() => {
                return Err(Error::Argument(format!(
                    "the whole region of '{name}' has {} dimensions but its buffer has {}",
                    r.len(),
                    own.len()
                )))
            }
            Some(r) => r.clone(),
            None => own,
        };
        for (d, (min, extent)) in region.into_iter().enumerate() {
            let (lo, end) = (min as i64, min as i64 + extent as i64);
            if extent < 0 || lo < -crate::ir::COORDINATE_LIMIT || end > crate::ir::COORDINATE_LIMIT {
                return Err(Error::Argument(format!(
                    "the whole region of '{name}' is [{min}, {end}) in dimension {d}: a negative extent or \
                     outside the coordinates Halogen computes with, [-2^30, 2^30)"
                )));
            }
            params.insert(distribute::global_region_param(name, "min", d), Expr::i32(lo));
            params.insert(distribute::global_region_param(name, "extent", d), Expr::i32(extent as i64));
        }
    }
    Ok(())
}

/// A buffer a pipeline can write an output into: a [`Buffer`] in host memory or a
/// [`DeviceBuffer`] (see [`Compiled::realize_outputs`]).
///
/// ```
/// use halogen::pipeline::OutputBuffer;
/// use halogen::Buffer;
/// let mut b = Buffer::<u16>::new(&[4, 2]);
/// assert_eq!(b.output_view().dims.len(), 2);
/// ```
pub trait OutputBuffer: sealed::Sealed {
    /// The type-erased, writable view a run binds.
    fn output_view(&mut self) -> RawBufferMut<'_>;
}

impl<T: Element> OutputBuffer for Buffer<T> {
    fn output_view(&mut self) -> RawBufferMut<'_> {
        self.raw_mut()
    }
}

impl<T: Element> OutputBuffer for DeviceBuffer<T> {
    fn output_view(&mut self) -> RawBufferMut<'_> {
        self.raw_mut()
    }
}

mod sealed {
    /// Only Halogen's own buffers are outputs: a run trusts their views.
    pub trait Sealed {}
    impl<T: crate::runtime::Element> Sealed for crate::runtime::Buffer<T> {}
    impl<T: crate::runtime::Element> Sealed for crate::runtime::gpu::DeviceBuffer<T> {}
}

/// Element type of a Func's first value (for tools).
pub fn output_type(f: &Func) -> Option<Type> {
    f.output_types().first().copied()
}
