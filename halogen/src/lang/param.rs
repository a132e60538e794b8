//! Pipeline inputs: scalar [`Param`]s and [`ImageParam`]s (input buffers).
//!
//! In expressions a parameter is a [`VarBinding::Param`](crate::ir::VarBinding) variable
//! and an image read is a [`CallKind::Image`] call; both carry only the name, which is
//! what the lowering and the runtime bind. An image's shape appears as the `i32`
//! parameters `"{name}.min.{d}"`, `"{name}.extent.{d}"` and `"{name}.stride.{d}"`.
//!
//! Because IR nodes carry names, not handles, every live `Param` and `ImageParam` is also
//! listed in a process-wide registry by name ([`ImageParam::lookup`], [`lookup_param`]),
//! so the compiler can find an input's estimates and recorded mistakes from the calls it
//! sees. If two live inputs share a name, the most recently created one is found.

use super::args::IntoArgs;
use super::expr_ops::to_i32;
use crate::error::Error;
use crate::ir::{CallKind, Expr, ExprKind, Name, Type};
use crate::runtime::Element;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A registry of live objects by name (weak, so dropping a handle unlists it).
struct Registry<T>(Mutex<HashMap<Name, Vec<Weak<T>>>>);

impl<T> Registry<T> {
    fn new() -> Self {
        Registry(Mutex::new(HashMap::new()))
    }
    fn add(&self, name: &Name, item: &Arc<T>) {
        let mut m = lock(&self.0);
        let list = m.entry(name.clone()).or_default();
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(item));
    }
    fn find(&self, name: &str) -> Option<Arc<T>> {
        let mut m = lock(&self.0);
        let list = m.get_mut(name)?;
        list.retain(|w| w.strong_count() > 0);
        let found = list.iter().rev().find_map(Weak::upgrade);
        if list.is_empty() {
            m.remove(name);
        }
        found
    }
}

// ----- scalar parameters -----

#[derive(Debug)]
struct ParamData {
    name: Name,
    ty: Type,
    estimate: Mutex<Option<Expr>>,
}

fn params() -> &'static Registry<ParamData> {
    static R: OnceLock<Registry<ParamData>> = OnceLock::new();
    R.get_or_init(Registry::new)
}

/// A scalar input of type `T`, given a value each time the pipeline runs
/// (`args.param(&p, value)`). A cheap handle: clones refer to the same parameter.
///
/// ```
/// use halogen::prelude::*;
/// let gain = Param::<f32>::new("gain");
/// gain.set_estimate(1.5);
/// let x = Var::new("x");
/// let e = Expr::from(&gain) * x;
/// assert_eq!(e.to_string(), "(gain * float32(x))");
/// assert_eq!(gain.expr().ty(), Type::f32());
/// ```
pub struct Param<T: Element> {
    data: Arc<ParamData>,
    _t: PhantomData<fn() -> T>,
}

impl<T: Element> Clone for Param<T> {
    fn clone(&self) -> Self {
        Param { data: self.data.clone(), _t: PhantomData }
    }
}

impl<T: Element> std::fmt::Debug for Param<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Param<{}>({})", T::TYPE, self.data.name)
    }
}

impl<T: Element> PartialEq for Param<T> {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.data, &o.data)
    }
}
impl<T: Element> Eq for Param<T> {}

impl<T: Element> Param<T> {
    /// A parameter called `name` (the name the runtime binds; keep it unique).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let p = Param::<u8>::new("threshold");
    /// assert_eq!(&*p.name(), "threshold");
    /// ```
    pub fn new(name: &str) -> Param<T> {
        let data = Arc::new(ParamData { name: name.into(), ty: T::TYPE, estimate: Mutex::new(None) });
        params().add(&data.name, &data);
        Param { data, _t: PhantomData }
    }
    /// Its name.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(&*Param::<i32>::new("k").name(), "k");
    /// ```
    pub fn name(&self) -> Name {
        self.data.name.clone()
    }
    /// Its type (`T`'s).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(Param::<u16>::new("k").ty(), Type::u16());
    /// ```
    pub fn ty(&self) -> Type {
        self.data.ty
    }
    /// The parameter as an expression.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let k = Param::<i32>::new("k");
    /// assert_eq!((k.expr() * 2).to_string(), "(k * 2)");
    /// ```
    pub fn expr(&self) -> Expr {
        Expr::param(self.data.ty, self.data.name.clone())
    }
    /// The value the auto-scheduler plans for.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let k = Param::<i32>::new("k");
    /// k.set_estimate(7);
    /// assert_eq!(k.estimate(), Some(Expr::from(7)));
    /// ```
    pub fn set_estimate(&self, v: T) -> &Self
    where
        Expr: From<T>,
    {
        *lock(&self.data.estimate) = Some(super::expr_ops::cast(T::TYPE, Expr::from(v)));
        self
    }
    /// The estimate, as a constant of type `T`, if one was set.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(Param::<f32>::new("g").estimate(), None);
    /// ```
    pub fn estimate(&self) -> Option<Expr> {
        lock(&self.data.estimate).clone()
    }
}

impl<T: Element> From<&Param<T>> for Expr {
    fn from(p: &Param<T>) -> Expr {
        p.expr()
    }
}

impl<T: Element> From<Param<T>> for Expr {
    fn from(p: Param<T>) -> Expr {
        p.expr()
    }
}

/// What the compiler needs to know about a scalar parameter it meets by name.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// Its name.
    pub name: Name,
    /// Its type.
    pub ty: Type,
    /// The estimate given with [`Param::set_estimate`], if any.
    pub estimate: Option<Expr>,
}

/// The live scalar parameter called `name` (the most recent one if several share it).
///
/// ```
/// use halogen::prelude::*;
/// use halogen::lang::param::lookup_param;
/// let p = Param::<f32>::new("lookup_doc_gain");
/// p.set_estimate(2.0);
/// let info = lookup_param("lookup_doc_gain").unwrap();
/// assert_eq!(info.ty, Type::f32());
/// assert_eq!(info.estimate, Some(Expr::from(2.0f32)));
/// ```
pub fn lookup_param(name: &str) -> Option<ParamInfo> {
    let d = params().find(name)?;
    let estimate = lock(&d.estimate).clone();
    Some(ParamInfo { name: d.name.clone(), ty: d.ty, estimate })
}

// ----- image parameters -----

#[derive(Debug)]
struct ImageParamData {
    name: Name,
    ty: Type,
    dims: usize,
    estimates: Mutex<Vec<(i32, i32)>>,
    errors: Mutex<Vec<Error>>,
    /// The dimensions its storage is distributed along (see [`ImageParam::distribute`]).
    distributed: Mutex<Vec<usize>>,
}

fn images() -> &'static Registry<ImageParamData> {
    static R: OnceLock<Registry<ImageParamData>> = OnceLock::new();
    R.get_or_init(Registry::new)
}

/// An input image (buffer) of element type `ty` and `dims` dimensions, bound when the
/// pipeline runs (`args.image(&input, &buf)`). A cheap handle: clones refer to the same
/// input.
///
/// Mistakes that cannot return `Err` where they happen (a call with the wrong number of
/// arguments, a float coordinate) are recorded in the input and reported by the compiler
/// (see [`ImageParam::errors`]).
///
/// ```
/// use halogen::prelude::*;
/// let input = ImageParam::new(Type::u16(), 2, "input");
/// let (x, y) = (Var::new("x"), Var::new("y"));
/// let e = input.at((x + 1, y));
/// assert_eq!(e.ty(), Type::u16());
/// assert_eq!(e.to_string(), "input((x + 1), y)");
/// assert_eq!(input.width().to_string(), "input.extent.0");
/// ```
#[derive(Clone)]
pub struct ImageParam(Arc<ImageParamData>);

impl std::fmt::Debug for ImageParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ImageParam({}: {}, {} dims)", self.0.name, self.0.ty, self.0.dims)
    }
}

impl PartialEq for ImageParam {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}
impl Eq for ImageParam {}
impl Hash for ImageParam {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(h)
    }
}

/// One dimension of an [`ImageParam`]: its shape as run-time `i32` expressions.
///
/// ```
/// use halogen::prelude::*;
/// let input = ImageParam::new(Type::u8(), 2, "img");
/// let d = input.dim(1);
/// assert_eq!(d.min().to_string(), "img.min.1");
/// assert_eq!(d.extent().to_string(), "img.extent.1");
/// assert_eq!(d.stride().to_string(), "img.stride.1");
/// assert_eq!(d.max().to_string(), "((img.min.1 + img.extent.1) - 1)");
/// ```
#[derive(Clone, Debug)]
pub struct Dimension {
    image: Name,
    index: usize,
}

impl Dimension {
    fn symbol(&self, what: &str) -> Expr {
        Expr::param(Type::i32(), format!("{}.{what}.{}", self.image, self.index))
    }
    /// The first coordinate.
    pub fn min(&self) -> Expr {
        self.symbol("min")
    }
    /// The number of coordinates.
    pub fn extent(&self) -> Expr {
        self.symbol("extent")
    }
    /// The last coordinate, `min + extent - 1`.
    pub fn max(&self) -> Expr {
        self.min() + self.extent() - 1
    }
    /// The distance in elements between neighbours along this dimension.
    pub fn stride(&self) -> Expr {
        self.symbol("stride")
    }
    /// Which dimension this is.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl ImageParam {
    /// An input called `name` (the name the runtime binds; keep it unique) with elements
    /// of type `ty` and `dims` dimensions.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::f32(), 3, "rgb");
    /// assert_eq!(input.dimensions(), 3);
    /// assert_eq!(input.ty(), Type::f32());
    /// ```
    pub fn new(ty: Type, dims: usize, name: &str) -> ImageParam {
        let data = Arc::new(ImageParamData {
            name: name.into(),
            ty: ty.element(),
            dims,
            estimates: Mutex::new(Vec::new()),
            errors: Mutex::new(Vec::new()),
            distributed: Mutex::new(Vec::new()),
        });
        images().add(&data.name, &data);
        ImageParam(data)
    }

    /// The live input called `name` (the most recent one if several share it): how the
    /// compiler gets from an image call back to the input's estimates and errors.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 2, "lookup_doc_image");
    /// assert_eq!(ImageParam::lookup("lookup_doc_image"), Some(input));
    /// assert_eq!(ImageParam::lookup("no_such_image_here"), None);
    /// ```
    pub fn lookup(name: &str) -> Option<ImageParam> {
        images().find(name).map(ImageParam)
    }

    /// Its name.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(&*ImageParam::new(Type::u8(), 2, "in").name(), "in");
    /// ```
    pub fn name(&self) -> Name {
        self.0.name.clone()
    }

    /// The element type.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(ImageParam::new(Type::u16(), 2, "in").ty(), Type::u16());
    /// ```
    pub fn ty(&self) -> Type {
        self.0.ty
    }

    /// The number of dimensions.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(ImageParam::new(Type::u16(), 2, "in").dimensions(), 2);
    /// ```
    pub fn dimensions(&self) -> usize {
        self.0.dims
    }

    #[track_caller]
    fn record(&self, e: Error) {
        lock(&self.0.errors).push(e);
    }

    /// A read of the pixel at `args` (one integer coordinate per dimension). A wrong
    /// number of arguments or a float coordinate is recorded as an error.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 2, "in");
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// assert_eq!(input.at((x, y * 2)).to_string(), "in(x, (y * 2))");
    /// let _bad = input.at(x);
    /// assert_eq!(input.errors().len(), 1);
    /// ```
    #[track_caller]
    pub fn at(&self, args: impl IntoArgs) -> Expr {
        let loc = Location::caller();
        let args = args.into_args();
        let name = &self.0.name;
        if args.len() != self.0.dims {
            self.record(Error::Definition(format!(
                "ImageParam '{name}' has {} dimensions but is called with {} arguments (at {loc})",
                self.0.dims,
                args.len()
            )));
        }
        for (i, a) in args.iter().enumerate() {
            if a.ty().is_float() {
                self.record(Error::Definition(format!(
                    "ImageParam '{name}': argument {i} ('{a}') is {}; coordinates are integers, convert it explicitly (at {loc})",
                    a.ty()
                )));
            }
        }
        let args = args.into_iter().map(to_i32).collect();
        Expr::make(self.0.ty, ExprKind::Call { name: name.clone(), args, kind: CallKind::Image })
    }

    /// Dimension `d`'s shape. Asking for a dimension it does not have records an error.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 2, "in");
    /// assert_eq!(input.dim(0).extent().to_string(), "in.extent.0");
    /// ```
    #[track_caller]
    pub fn dim(&self, d: usize) -> Dimension {
        if d >= self.0.dims {
            self.record(Error::Definition(format!(
                "ImageParam '{}' has {} dimensions; dim({d}) does not exist (at {})",
                self.0.name,
                self.0.dims,
                Location::caller()
            )));
        }
        Dimension { image: self.0.name.clone(), index: d }
    }

    /// The extent of dimension 0.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(ImageParam::new(Type::u8(), 2, "in").width().to_string(), "in.extent.0");
    /// ```
    #[track_caller]
    pub fn width(&self) -> Expr {
        self.dim(0).extent()
    }

    /// The extent of dimension 1.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(ImageParam::new(Type::u8(), 2, "in").height().to_string(), "in.extent.1");
    /// ```
    #[track_caller]
    pub fn height(&self) -> Expr {
        self.dim(1).extent()
    }

    /// The extent of dimension 2.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(ImageParam::new(Type::u8(), 3, "in").channels().to_string(), "in.extent.2");
    /// ```
    #[track_caller]
    pub fn channels(&self) -> Expr {
        self.dim(2).extent()
    }

    /// The input's own region, `(min, extent)` per dimension: what the boundary
    /// conditions take.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 2, "in");
    /// let b = input.bounds();
    /// assert_eq!(b.len(), 2);
    /// assert_eq!(b[1].0.to_string(), "in.min.1");
    /// assert_eq!(b[1].1.to_string(), "in.extent.1");
    /// ```
    pub fn bounds(&self) -> Vec<(Expr, Expr)> {
        (0..self.0.dims)
            .map(|d| {
                let dim = Dimension { image: self.0.name.clone(), index: d };
                (dim.min(), dim.extent())
            })
            .collect()
    }

    /// The sizes the auto-scheduler plans for, `(min, extent)` per dimension. Giving a
    /// different number of pairs than dimensions records an error.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 2, "in");
    /// input.set_estimates(&[(0, 1920), (0, 1080)]);
    /// assert_eq!(input.estimates(), vec![(0, 1920), (0, 1080)]);
    /// ```
    /// Distribute the image over the ranks of a distributed run along dimensions `dims`
    /// (innermost first; Distributed Halide's `placement().distribute()`): each rank's
    /// buffer then holds only its block of the image (the block distribution of each of
    /// those dimensions over the ranks, or over a grid of them, as
    /// [`crate::Func::distribute`] splits a loop), and the ranks exchange the borders the
    /// pipeline reads across blocks. `Args::global_input` gives the whole image's region.
    /// A dimension the image does not have is an error when the pipeline is compiled.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen::runtime::distributed::InProcessRanks;
    /// use halogen::runtime::gather::block_slice;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let input = ImageParam::new(Type::i32(), 2, "doc_placed_in");
    /// input.distribute(&[1]);
    /// let f = Func::new("doc_placed_f");
    /// f.def((x, y), input.at((x, y)) + input.at((x, y + 1)));
    /// f.distribute(y);
    /// let c = Pipeline::new(&[&f]).compile(&"host-mpi".parse().unwrap()).unwrap();
    /// // A 2 × 9 image (each pixel its row) over 3 ranks: each holds its 3 rows, and the
    /// // first two read the first row of the next.
    /// let out = InProcessRanks::run(3, |comm| {
    ///     let (lo, hi) = block_slice(9, comm.rank(), comm.ranks());
    ///     let mut mine = Buffer::<i32>::from_fn(&[2, hi - lo], |c| c[1] + lo);
    ///     mine.set_min(&[0, lo]);
    ///     let mut o = Buffer::<i32>::new(&[2, 8]);
    ///     let mut args = Args::new();
    ///     args.image(&input, &mine).communicator(comm.clone()).global_input(&input, &[(0, 2), (0, 9)]);
    ///     c.realize(&args, &mut o).unwrap();
    ///     let (first, last) = block_slice(8, comm.rank(), comm.ranks());
    ///     (o[[1, first]], o[[1, last - 1]])
    /// });
    /// // f(x, y) = y + (y + 1)
    /// assert_eq!(out, vec![(1, 5), (7, 11), (13, 15)]);
    /// ```
    pub fn distribute(&self, dims: &[usize]) -> &Self {
        let mut d = lock(&self.0.distributed);
        for &dim in dims {
            if !d.contains(&dim) {
                d.push(dim);
            }
        }
        self
    }

    /// The dimensions [`ImageParam::distribute`] gave, innermost first.
    pub fn distributed_dims(&self) -> Vec<usize> {
        lock(&self.0.distributed).clone()
    }

    #[track_caller]
    pub fn set_estimates(&self, estimates: &[(i32, i32)]) -> &Self {
        if estimates.len() != self.0.dims {
            self.record(Error::Definition(format!(
                "ImageParam '{}' has {} dimensions but set_estimates got {} (min, extent) pairs (at {})",
                self.0.name,
                self.0.dims,
                estimates.len(),
                Location::caller()
            )));
        }
        *lock(&self.0.estimates) = estimates.to_vec();
        self
    }

    /// The estimates given with [`ImageParam::set_estimates`] (empty if none).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert!(ImageParam::new(Type::u8(), 2, "in").estimates().is_empty());
    /// ```
    pub fn estimates(&self) -> Vec<(i32, i32)> {
        lock(&self.0.estimates).clone()
    }

    /// The mistakes recorded so far (the compiler reports them as `Err`).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 1, "in");
    /// let _ = input.at((Var::new("x"), 0));
    /// assert!(input.errors()[0].to_string().contains("has 1 dimensions but is called with 2"));
    /// ```
    pub fn errors(&self) -> Vec<Error> {
        lock(&self.0.errors).clone()
    }

    /// The mistakes recorded so far, removing them.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 1, "in");
    /// let _ = input.dim(3);
    /// assert_eq!(input.take_errors().len(), 1);
    /// assert!(input.errors().is_empty());
    /// ```
    pub fn take_errors(&self) -> Vec<Error> {
        std::mem::take(&mut *lock(&self.0.errors))
    }
}

/// The errors recorded in the live input called `name` (empty if there is none): what
/// the compiler checks for each image it finds called in a pipeline.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::lang::param::image_param_errors;
/// let input = ImageParam::new(Type::u8(), 2, "errs_doc_image");
/// let _ = input.at(Var::new("x"));
/// assert_eq!(image_param_errors("errs_doc_image").len(), 1);
/// ```
pub fn image_param_errors(name: &str) -> Vec<Error> {
    ImageParam::lookup(name).map(|p| p.errors()).unwrap_or_default()
}

/// The dimensions the live `ImageParam` called `name` is distributed along.
pub fn image_param_distribution(name: &str) -> Vec<usize> {
    ImageParam::lookup(name).map(|p| p.distributed_dims()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::VarBinding;
    use crate::lang::var::Var;

    #[test]
    fn param_expr_and_registry() {
        let p = Param::<u16>::new("param_test_p");
        let e = p.expr();
        assert_eq!(e.ty(), Type::u16());
        assert!(matches!(e.kind(), ExprKind::Var { binding: VarBinding::Param, .. }));
        assert_eq!((Expr::from(&p) + 1).ty(), Type::u16());
        p.set_estimate(640);
        assert_eq!(p.estimate().unwrap().as_int(), Some(640));
        assert_eq!(p.estimate().unwrap().ty(), Type::u16());
        let info = lookup_param("param_test_p").unwrap();
        assert_eq!(info.ty, Type::u16());
        drop(info);
        drop(p);
        assert!(lookup_param("param_test_p").is_none());
    }

    #[test]
    fn image_calls_cast_args_to_i32() {
        let img = ImageParam::new(Type::u8(), 2, "param_test_img");
        let x = Var::new("x");
        let e = img.at((Expr::from(3u8), x));
        match e.kind() {
            ExprKind::Call { args, kind: CallKind::Image, name } => {
                assert_eq!(&**name, "param_test_img");
                assert!(args.iter().all(|a| a.ty() == Type::i32()));
            }
            _ => panic!("not an image call: {e}"),
        }
        assert!(img.errors().is_empty());
    }

    #[test]
    fn image_mistakes_are_recorded() {
        let img = ImageParam::new(Type::u8(), 2, "param_test_bad");
        let x = Var::new("x");
        let _ = img.at((x, x, x));
        let _ = img.at((x * 0.5, x));
        let _ = img.channels();
        img.set_estimates(&[(0, 10)]);
        let errs = img.errors();
        assert_eq!(errs.len(), 4, "{errs:?}");
        assert!(errs[0].to_string().contains("'param_test_bad' has 2 dimensions but is called with 3 arguments"));
        assert!(errs[1].to_string().contains("argument 0"));
        assert!(errs[2].to_string().contains("dim(2) does not exist"));
        assert!(errs[3].to_string().contains("set_estimates got 1"));
        assert_eq!(image_param_errors("param_test_bad").len(), 4);
        assert_eq!(img.take_errors().len(), 4);
        assert!(img.errors().is_empty());
    }

    #[test]
    fn shape_symbols() {
        let img = ImageParam::new(Type::f32(), 3, "param_test_shape");
        assert_eq!(img.width().to_string(), "param_test_shape.extent.0");
        assert_eq!(img.height().to_string(), "param_test_shape.extent.1");
        assert_eq!(img.channels().to_string(), "param_test_shape.extent.2");
        assert_eq!(img.dim(2).min().to_string(), "param_test_shape.min.2");
        let b = img.bounds();
        assert_eq!(b.len(), 3);
        assert!(matches!(b[0].0.kind(), ExprKind::Var { binding: VarBinding::Param, .. }));
        assert_eq!(b[0].1.ty(), Type::i32());
    }

    #[test]
    fn lookup_finds_the_newest_live_image() {
        let a = ImageParam::new(Type::u8(), 1, "param_test_dup");
        let b = ImageParam::new(Type::u16(), 1, "param_test_dup");
        assert_eq!(ImageParam::lookup("param_test_dup"), Some(b.clone()));
        drop(b);
        assert_eq!(ImageParam::lookup("param_test_dup"), Some(a.clone()));
        drop(a);
        assert_eq!(ImageParam::lookup("param_test_dup"), None);
    }
}
