//! [`DynBuffer`]: a [`Buffer`] of one of the element types the apps use, chosen at run time,
//! and comparison of two of them ([`Tolerance`], [`Mismatch`]).

use halogen::prelude::*;
use std::fmt;

/// A buffer whose element type is known only at run time (what the command-line tool and
/// the app registry pass around).
///
/// ```
/// use halogen::prelude::*;
/// use halogen_apps::DynBuffer;
/// let b = DynBuffer::zeros(Type::u16(), &[4, 3]).unwrap();
/// assert_eq!(b.ty(), Type::u16());
/// assert_eq!(b.extents(), vec![4, 3]);
/// assert_eq!(b.get_f64(&[1, 1]), Some(0.0));
/// ```
#[derive(Clone, PartialEq)]
pub enum DynBuffer {
    /// 8-bit unsigned pixels.
    U8(Buffer<u8>),
    /// 16-bit unsigned pixels.
    U16(Buffer<u16>),
    /// 32-bit signed values.
    I32(Buffer<i32>),
    /// 32-bit float pixels.
    F32(Buffer<f32>),
}

macro_rules! each {
    ($self:expr, $b:ident => $e:expr) => {
        match $self {
            DynBuffer::U8($b) => $e,
            DynBuffer::U16($b) => $e,
            DynBuffer::I32($b) => $e,
            DynBuffer::F32($b) => $e,
        }
    };
}

impl fmt::Debug for DynBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DynBuffer<{}>{:?}", self.ty(), self.extents())
    }
}

impl From<Buffer<u8>> for DynBuffer {
    fn from(b: Buffer<u8>) -> Self {
        DynBuffer::U8(b)
    }
}
impl From<Buffer<u16>> for DynBuffer {
    fn from(b: Buffer<u16>) -> Self {
        DynBuffer::U16(b)
    }
}
impl From<Buffer<i32>> for DynBuffer {
    fn from(b: Buffer<i32>) -> Self {
        DynBuffer::I32(b)
    }
}
impl From<Buffer<f32>> for DynBuffer {
    fn from(b: Buffer<f32>) -> Self {
        DynBuffer::F32(b)
    }
}

/// Typed access to the buffer inside a [`DynBuffer`].
pub trait FromDyn: Element {
    /// The buffer, if `b` holds this element type.
    fn from_dyn(b: &DynBuffer) -> Option<&Buffer<Self>>;
}
impl FromDyn for u8 {
    fn from_dyn(b: &DynBuffer) -> Option<&Buffer<u8>> {
        match b {
            DynBuffer::U8(b) => Some(b),
            _ => None,
        }
    }
}
impl FromDyn for u16 {
    fn from_dyn(b: &DynBuffer) -> Option<&Buffer<u16>> {
        match b {
            DynBuffer::U16(b) => Some(b),
            _ => None,
        }
    }
}
impl FromDyn for i32 {
    fn from_dyn(b: &DynBuffer) -> Option<&Buffer<i32>> {
        match b {
            DynBuffer::I32(b) => Some(b),
            _ => None,
        }
    }
}
impl FromDyn for f32 {
    fn from_dyn(b: &DynBuffer) -> Option<&Buffer<f32>> {
        match b {
            DynBuffer::F32(b) => Some(b),
            _ => None,
        }
    }
}

impl DynBuffer {
    /// The element types a `DynBuffer` holds.
    pub const TYPES: [Type; 4] = [Type::u8(), Type::u16(), Type::i32(), Type::f32()];

    /// A zero-filled buffer of element type `ty` (one of [`DynBuffer::TYPES`]).
    pub fn zeros(ty: Type, extents: &[i32]) -> halogen::Result<DynBuffer> {
        Ok(match ty {
            t if t == Type::u8() => DynBuffer::U8(Buffer::try_new(extents)?),
            t if t == Type::u16() => DynBuffer::U16(Buffer::try_new(extents)?),
            t if t == Type::i32() => DynBuffer::I32(Buffer::try_new(extents)?),
            t if t == Type::f32() => DynBuffer::F32(Buffer::try_new(extents)?),
            t => return Err(halogen::Error::Buffer(format!("apps use u8, u16, i32 and f32 buffers, not {t}"))),
        })
    }

    /// The element type.
    pub fn ty(&self) -> Type {
        match self {
            DynBuffer::U8(_) => Type::u8(),
            DynBuffer::U16(_) => Type::u16(),
            DynBuffer::I32(_) => Type::i32(),
            DynBuffer::F32(_) => Type::f32(),
        }
    }

    /// The buffer as `Buffer<T>`, if it holds `T`s.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen_apps::DynBuffer;
    /// let b = DynBuffer::from(Buffer::<u8>::new(&[2]));
    /// assert!(b.typed::<u8>().is_some());
    /// assert!(b.typed::<f32>().is_none());
    /// ```
    pub fn typed<T: FromDyn>(&self) -> Option<&Buffer<T>> {
        T::from_dyn(self)
    }

    /// Number of dimensions.
    pub fn dimensions(&self) -> usize {
        each!(self, b => b.dimensions())
    }

    /// Extent of every dimension.
    pub fn extents(&self) -> Vec<i32> {
        each!(self, b => b.extents())
    }

    /// Min of every dimension.
    pub fn mins(&self) -> Vec<i32> {
        each!(self, b => b.mins())
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        each!(self, b => b.len())
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element at `coords`, as `f64`.
    pub fn get_f64(&self, coords: &[i32]) -> Option<f64> {
        match self {
            DynBuffer::U8(b) => b.get(coords).map(f64::from),
            DynBuffer::U16(b) => b.get(coords).map(f64::from),
            DynBuffer::I32(b) => b.get(coords).map(f64::from),
            DynBuffer::F32(b) => b.get(coords).map(f64::from),
        }
    }

    /// Every element in storage order, as `f64`.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match self {
            DynBuffer::U8(b) => b.as_slice().iter().map(|&v| f64::from(v)).collect(),
            DynBuffer::U16(b) => b.as_slice().iter().map(|&v| f64::from(v)).collect(),
            DynBuffer::I32(b) => b.as_slice().iter().map(|&v| f64::from(v)).collect(),
            DynBuffer::F32(b) => b.as_slice().iter().map(|&v| f64::from(v)).collect(),
        }
    }

    /// The same values as an `f32` buffer scaled to `[0, 1]` for the integer types
    /// (`u8 / 255`, `u16 / 65535`); `f32` and `i32` values are kept as they are.
    pub fn to_unit_f32(&self) -> Buffer<f32> {
        let (scale, ext, mins) = match self {
            DynBuffer::U8(_) => (1.0 / 255.0, self.extents(), self.mins()),
            DynBuffer::U16(_) => (1.0 / 65535.0, self.extents(), self.mins()),
            _ => (1.0, self.extents(), self.mins()),
        };
        let data: Vec<f32> = self.to_f64_vec().into_iter().map(|v| (v * scale) as f32).collect();
        let mut b = Buffer::from_vec(data, &ext).expect("same extents");
        b.set_min(&mins);
        b
    }

    /// Runs `compiled` with `args` into this buffer.
    pub fn realize(&mut self, compiled: &Compiled, args: &Args<'_>) -> halogen::Result<()> {
        each!(self, b => compiled.realize(args, b))
    }

    /// Gives every rank of a distributed run the whole buffer, each rank having computed
    /// its slice of dimension `dim` in groups of `granule` (see
    /// [`halogen::runtime::gather::all_gather_slices`]).
    pub fn all_gather_slices(
        &mut self,
        comm: &dyn halogen::runtime::distributed::Communicator,
        dim: usize,
        granule: i32,
    ) -> halogen::Result<()> {
        each!(self, b => halogen::runtime::gather::all_gather_slices(comm, b, dim, granule))
    }

    /// A new buffer holding the sub-region `min .. min + extent` of dimension `d`, with the
    /// coordinates kept (see [`halogen::Buffer::crop`]).
    pub fn crop(&self, d: usize, min: i32, extent: i32) -> halogen::Result<DynBuffer> {
        Ok(match self {
            DynBuffer::U8(b) => DynBuffer::U8(b.crop(d, min, extent)?),
            DynBuffer::U16(b) => DynBuffer::U16(b.crop(d, min, extent)?),
            DynBuffer::I32(b) => DynBuffer::I32(b.crop(d, min, extent)?),
            DynBuffer::F32(b) => DynBuffer::F32(b.crop(d, min, extent)?),
        })
    }

    /// Binds this buffer to `param`.
    pub fn bind<'a>(&'a self, param: &ImageParam, args: &mut Args<'a>) {
        each!(self, b => { args.image(param, b); })
    }

    /// Compares with `expected`: same type and shape, and every element within
    /// `tolerance`. The error says how many differ and where the worst one is.
    ///
    /// Non-finite values are compared exactly: NaN matches only NaN, and an infinity only
    /// the infinity of the same sign. The scale of a relative tolerance is the largest
    /// finite `|expected|`, so an infinity in the reference cannot widen the tolerance to
    /// infinity; a non-finite mismatch counts as the worst difference.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen_apps::{DynBuffer, Tolerance};
    /// let a = DynBuffer::from(Buffer::from_vec(vec![1.0f32, 2.0], &[2]).unwrap());
    /// let b = DynBuffer::from(Buffer::from_vec(vec![1.0f32, 2.0001], &[2]).unwrap());
    /// assert!(a.compare(&b, Tolerance::Exact).is_err());
    /// assert!(a.compare(&b, Tolerance::Relative(1e-4)).is_ok());
    /// let inf = DynBuffer::from(Buffer::from_vec(vec![f32::INFINITY, 2.0001], &[2]).unwrap());
    /// assert!(a.compare(&inf, Tolerance::Relative(1e-4)).is_err());
    /// assert!(inf.compare(&inf, Tolerance::Exact).is_ok());
    /// ```
    pub fn compare(&self, expected: &DynBuffer, tolerance: Tolerance) -> Result<Agreement, Mismatch> {
        if self.ty() != expected.ty() || self.extents() != expected.extents() || self.mins() != expected.mins() {
            return Err(Mismatch::Shape {
                got: format!("{} {:?} at {:?}", self.ty(), self.extents(), self.mins()),
                expected: format!("{} {:?} at {:?}", expected.ty(), expected.extents(), expected.mins()),
            });
        }
        let (a, b) = (self.to_f64_vec(), expected.to_f64_vec());
        let scale = b.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
        let limit = match tolerance {
            Tolerance::Exact => 0.0,
            Tolerance::Relative(r) => r * scale,
        };
        let mut bad = 0usize;
        let mut worst = (0usize, 0.0f64);
        for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
            let d = if x.is_finite() && y.is_finite() {
                (x - y).abs()
            } else if x == y || (x.is_nan() && y.is_nan()) {
                0.0
            } else {
                f64::INFINITY
            };
            if d > limit {
                bad += 1;
            }
            // Strictly greater: the first of several non-finite mismatches is reported.
            if d > worst.1 {
                worst = (i, d);
            }
        }
        let coords = |i: usize| {
            let mut rest = i;
            self.extents()
                .iter()
                .zip(self.mins())
                .map(|(&e, m)| {
                    let c = (rest % e.max(1) as usize) as i32 + m;
                    rest /= e.max(1) as usize;
                    c
                })
                .collect::<Vec<i32>>()
        };
        if bad > 0 {
            return Err(Mismatch::Values {
                count: bad,
                total: a.len(),
                at: coords(worst.0),
                got: a[worst.0],
                expected: b[worst.0],
            });
        }
        Ok(Agreement { max_abs: worst.1, max_rel: worst.1 / scale })
    }
}

/// How closely two buffers must agree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// Bit for bit (integer apps, and float apps on the same order of operations).
    Exact,
    /// Every `|a - b| <= r * max|expected|`, the max over the finite expected values
    /// (Halide's fixtures use `1e-4`); non-finite values must be equal.
    Relative(f64),
}

/// How close two buffers that agree within the tolerance are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agreement {
    /// The largest absolute difference.
    pub max_abs: f64,
    /// The largest difference relative to `max|expected|`.
    pub max_rel: f64,
}

/// Why two buffers do not agree.
#[derive(Clone, Debug, PartialEq)]
pub enum Mismatch {
    /// Different types or shapes.
    Shape {
        /// What was given.
        got: String,
        /// What was expected.
        expected: String,
    },
    /// Some values differ by more than the tolerance.
    Values {
        /// How many.
        count: usize,
        /// Out of.
        total: usize,
        /// Coordinates of the largest difference (of the first non-finite mismatch, if any).
        at: Vec<i32>,
        /// The value there.
        got: f64,
        /// The expected value there.
        expected: f64,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Shape { got, expected } => write!(f, "shape differs: got {got}, expected {expected}"),
            Mismatch::Values { count, total, at, got, expected } => {
                // Only a non-finite mismatch has a non-finite value at the worst place.
                let which = if got.is_finite() && expected.is_finite() {
                    "the largest difference"
                } else {
                    "the first non-finite mismatch"
                };
                write!(f, "{count} of {total} values differ; {which} is at {at:?}: got {got}, expected {expected}")
            }
        }
    }
}

impl std::error::Error for Mismatch {}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> DynBuffer {
        Buffer::from_vec(v.to_vec(), &[v.len() as i32]).unwrap().into()
    }

    #[test]
    fn non_finite_values_compare_exactly() {
        let (inf, nan) = (f32::INFINITY, f32::NAN);
        let tol = Tolerance::Relative(1e-4);
        // An infinity in the reference used to make the tolerance infinite.
        let e = f32s(&[1.0, inf, 2.0]).compare(&f32s(&[5.0, inf, 2.0]), tol).unwrap_err();
        assert_eq!(e.to_string(), "1 of 3 values differ; the largest difference is at [0]: got 1, expected 5");
        // NaN matches NaN at the same place only; inf only inf of the same sign.
        let e = f32s(&[nan, 1.0]).compare(&f32s(&[1.0, nan]), tol).unwrap_err();
        assert_eq!(e.to_string(), "2 of 2 values differ; the first non-finite mismatch is at [0]: got NaN, expected 1");
        let e = f32s(&[0.0, -inf]).compare(&f32s(&[0.0, inf]), tol).unwrap_err();
        assert_eq!(
            e.to_string(),
            "1 of 2 values differ; the first non-finite mismatch is at [1]: got -inf, expected inf"
        );
        let e = f32s(&[nan]).compare(&f32s(&[inf]), Tolerance::Exact).unwrap_err();
        assert!(e.to_string().contains("got NaN, expected inf"), "{e}");
        // Equal non-finite values agree, and the scale comes from the finite ones.
        let a = f32s(&[nan, inf, -inf, 100.0, 1.0]).compare(&f32s(&[nan, inf, -inf, 100.005, 1.0]), tol).unwrap();
        assert!((a.max_abs - 0.005).abs() < 1e-3 && a.max_rel.is_finite(), "{a:?}");
        let e = f32s(&[inf, 100.0]).compare(&f32s(&[inf, 100.5]), tol).unwrap_err();
        assert!(e.to_string().contains("at [1]: got 100, expected 100.5"), "{e}");
    }
}

/// A [`DeviceBuffer`](halogen::DeviceBuffer) of one of the element types the apps use,
/// chosen at run time: the output of a run that leaves its result on the GPU.
///
/// ```
/// use halogen::prelude::*;
/// use halogen_apps::DynDeviceBuffer;
/// // Without an OpenCL device this is an `Err` that names what is missing.
/// if let Ok(b) = DynDeviceBuffer::zeros(Type::u16(), &[4, 3], &"host-opencl".parse().unwrap()) {
///     assert_eq!(b.to_host().unwrap().extents(), vec![4, 3]);
/// }
/// ```
#[derive(Debug)]
pub enum DynDeviceBuffer {
    /// 8-bit unsigned pixels.
    U8(halogen::DeviceBuffer<u8>),
    /// 16-bit unsigned pixels.
    U16(halogen::DeviceBuffer<u16>),
    /// 32-bit signed values.
    I32(halogen::DeviceBuffer<i32>),
    /// 32-bit float pixels.
    F32(halogen::DeviceBuffer<f32>),
}

macro_rules! each_device {
    ($self:expr, $b:ident => $e:expr) => {
        match $self {
            DynDeviceBuffer::U8($b) => $e,
            DynDeviceBuffer::U16($b) => $e,
            DynDeviceBuffer::I32($b) => $e,
            DynDeviceBuffer::F32($b) => $e,
        }
    };
}

impl DynDeviceBuffer {
    /// A zero-filled buffer of `ty` with the given extents on the GPU of `target`.
    pub fn zeros(ty: Type, extents: &[i32], target: &Target) -> halogen::Result<DynDeviceBuffer> {
        use halogen::DeviceBuffer;
        Ok(match ty {
            t if t == Type::u8() => DynDeviceBuffer::U8(DeviceBuffer::new(target, extents)?),
            t if t == Type::u16() => DynDeviceBuffer::U16(DeviceBuffer::new(target, extents)?),
            t if t == Type::i32() => DynDeviceBuffer::I32(DeviceBuffer::new(target, extents)?),
            t if t == Type::f32() => DynDeviceBuffer::F32(DeviceBuffer::new(target, extents)?),
            t => return Err(halogen::Error::Buffer(format!("apps use u8, u16, i32 and f32 buffers, not {t}"))),
        })
    }

    /// Runs `compiled` with `args` into this buffer, leaving the result on the device.
    pub fn realize(&mut self, compiled: &Compiled, args: &Args<'_>) -> halogen::Result<()> {
        each_device!(self, b => compiled.realize_to_device(args, b))
    }

    /// A copy on the host.
    pub fn to_host(&self) -> halogen::Result<DynBuffer> {
        Ok(match self {
            DynDeviceBuffer::U8(b) => DynBuffer::U8(b.to_host()?),
            DynDeviceBuffer::U16(b) => DynBuffer::U16(b.to_host()?),
            DynDeviceBuffer::I32(b) => DynBuffer::I32(b.to_host()?),
            DynDeviceBuffer::F32(b) => DynBuffer::F32(b.to_host()?),
        })
    }
}
