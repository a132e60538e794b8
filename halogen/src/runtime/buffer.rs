//! Dense, owned, multi-dimensional buffers of pixels, and type-erased views of them for the
//! compiler's back ends.
//!
//! A [`Buffer`] is always dense: dimension 0 is innermost with stride 1, each further stride
//! is the product of the extents below it, and the elements start at storage index 0. Every
//! dimension has its own `min`, so a buffer can cover any box of the integer grid (a crop
//! keeps its coordinates). Keeping buffers dense with no offset (a crop copies) makes
//! `as_slice()` mean "the elements of this buffer" with no surprises, and lets back ends take
//! a flat element index `Σ (c_d - min_d) * stride_d`.

use super::element::Element;
use crate::error::{Error, Result};
use crate::ir::Type;
use std::fmt;
use std::ops::{Index, IndexMut};

/// The largest number of dimensions a buffer may have.
pub const MAX_DIMENSIONS: usize = 8;

/// The shape of one dimension: coordinates `min .. min + extent`, `stride` elements apart.
///
/// ```
/// use halogen::runtime::BufferDim;
/// let d = BufferDim { min: -2, extent: 5, stride: 1 };
/// assert_eq!(d.max(), 2);
/// assert!(d.contains(-2) && d.contains(2) && !d.contains(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct BufferDim {
    /// First coordinate.
    pub min: i32,
    /// Number of coordinates.
    pub extent: i32,
    /// Distance in elements between neighbours along this dimension.
    pub stride: i32,
}

impl BufferDim {
    /// Last coordinate (`min + extent - 1`; `min - 1` when the extent is zero).
    pub fn max(&self) -> i32 {
        (self.min as i64 + self.extent as i64 - 1) as i32
    }
    /// Whether `c` lies in `min .. min + extent`.
    pub fn contains(&self, c: i32) -> bool {
        let c = c as i64;
        c >= self.min as i64 && c < self.min as i64 + self.extent as i64
    }
}

/// Flat element index of `coords` in storage described by `dims`, or `None` if the number of
/// coordinates differs from the number of dimensions or a coordinate is outside its range.
fn flat_index(dims: &[BufferDim], coords: &[i32]) -> Option<usize> {
    if coords.len() != dims.len() {
        return None;
    }
    let mut idx = 0usize;
    for (d, &c) in dims.iter().zip(coords) {
        if !d.contains(c) {
            return None;
        }
        idx += (c as i64 - d.min as i64) as usize * d.stride as usize;
    }
    Some(idx)
}

/// `[0, 4) x [-1, 2)`: the region a buffer covers, for error messages.
fn describe_region(dims: &[BufferDim]) -> String {
    if dims.is_empty() {
        return "a single element (zero dimensions)".to_string();
    }
    dims.iter().map(|d| format!("[{}, {})", d.min, d.min as i64 + d.extent as i64)).collect::<Vec<_>>().join(" x ")
}

/// Dense dims for `mins` and `extents`, checking every limit.
pub(crate) fn dense_dims(mins: &[i32], extents: &[i32]) -> Result<(Vec<BufferDim>, usize)> {
    if mins.len() != extents.len() {
        return Err(Error::Buffer(format!(
            "{} mins given for {} extents; give one min per dimension",
            mins.len(),
            extents.len()
        )));
    }
    if extents.len() > MAX_DIMENSIONS {
        return Err(Error::Buffer(format!(
            "{} dimensions requested; a buffer has at most {MAX_DIMENSIONS}",
            extents.len()
        )));
    }
    let mut dims = Vec::with_capacity(extents.len());
    let mut count: usize = 1;
    for (d, (&min, &extent)) in mins.iter().zip(extents).enumerate() {
        if extent < 0 {
            return Err(Error::Buffer(format!("dimension {d} has negative extent {extent}")));
        }
        if min as i64 + extent as i64 - 1 > i32::MAX as i64 {
            return Err(Error::Buffer(format!(
                "dimension {d}: min {min} + extent {extent} goes past the largest i32 coordinate"
            )));
        }
        let stride = i32::try_from(count).map_err(|_| {
            Error::Buffer(format!(
                "dimension {d}: stride {count} does not fit in i32 (extents {extents:?} are too large)"
            ))
        })?;
        dims.push(BufferDim { min, extent, stride });
        count = count
            .checked_mul(extent as usize)
            .ok_or_else(|| Error::Buffer(format!("extents {extents:?} overflow the address space")))?;
    }
    Ok((dims, count))
}

/// A dense, owned buffer of `T` over a box of the integer grid, with 0 to 8 dimensions.
///
/// Dimension 0 is innermost (stride 1). Coordinates are `i32` and start at each dimension's
/// `min` (0 unless given). Out-of-range access through `get`/`set` is an `Option`/`Err`;
/// through `buf[[x, y]]` it panics, like slice indexing.
///
/// ```
/// use halogen::runtime::Buffer;
/// let mut b = Buffer::<u16>::new(&[4, 3]); // width 4, height 3, zeros
/// b[[1, 2]] = 7;
/// assert_eq!(b.get(&[1, 2]), Some(7));
/// assert_eq!(b.get(&[4, 0]), None);
/// assert!(b.set(&[0, 3], 1).is_err());
/// assert_eq!((b.width(), b.height(), b.channels()), (4, 3, 1));
/// assert_eq!(b.as_slice()[2 * 4 + 1], 7);
/// ```
#[derive(Clone, PartialEq)]
pub struct Buffer<T: Element> {
    data: Vec<T>,
    dims: Vec<BufferDim>,
}

impl<T: Element> Buffer<T> {
    /// A zero-filled buffer with the given extents (mins 0).
    ///
    /// # Panics
    /// On a negative extent, more than 8 dimensions, or a size that does not fit; use
    /// [`Buffer::try_new`] to get an `Err` instead.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let b = Buffer::<f32>::new(&[8, 4, 3]);
    /// assert_eq!(b.len(), 96);
    /// assert_eq!(b.dim(1).stride, 8);
    /// ```
    #[track_caller]
    pub fn new(extents: &[i32]) -> Buffer<T> {
        Self::try_new(extents).unwrap_or_else(|e| panic!("Buffer::new: {e}"))
    }

    /// A zero-filled buffer with the given extents (mins 0), or `Error::Buffer` naming the
    /// dimension and the value that is wrong.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let e = Buffer::<u8>::try_new(&[4, -1]).unwrap_err();
    /// assert!(e.to_string().contains("dimension 1 has negative extent -1"));
    /// ```
    pub fn try_new(extents: &[i32]) -> Result<Buffer<T>> {
        Self::try_with_min(&vec![0; extents.len()], extents)
    }

    /// A zero-filled buffer covering `mins[d] .. mins[d] + extents[d]` in each dimension.
    ///
    /// # Panics
    /// When `mins` and `extents` differ in length, or as [`Buffer::new`] does.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let mut b = Buffer::<i32>::with_min(&[-1, 10], &[3, 2]);
    /// b[[-1, 11]] = 5;
    /// assert_eq!(b.as_slice()[3], 5);
    /// assert_eq!((b.min(0), b.extent(1)), (-1, 2));
    /// ```
    #[track_caller]
    pub fn with_min(mins: &[i32], extents: &[i32]) -> Buffer<T> {
        Self::try_with_min(mins, extents).unwrap_or_else(|e| panic!("Buffer::with_min: {e}"))
    }

    /// Like [`Buffer::with_min`], returning `Err` instead of panicking.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// assert!(Buffer::<u8>::try_with_min(&[0], &[1, 2]).is_err());
    /// ```
    pub fn try_with_min(mins: &[i32], extents: &[i32]) -> Result<Buffer<T>> {
        let (dims, count) = dense_dims(mins, extents)?;
        let mut data: Vec<T> = Vec::new();
        data.try_reserve_exact(count).map_err(|_| {
            Error::Buffer(format!("cannot allocate {count} elements of {} for extents {extents:?}", T::TYPE))
        })?;
        // Before the first touch, so that the zero-fill below already faults huge pages.
        super::huge_pages::advise(data.as_mut_ptr().cast(), data.capacity() * std::mem::size_of::<T>());
        data.resize(count, T::default());
        Ok(Buffer { data, dims })
    }

    /// A buffer holding `data` (in storage order: dimension 0 fastest) with the given
    /// extents (mins 0). `Err` if `data.len()` is not the product of the extents.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let b = Buffer::from_vec(vec![1u8, 2, 3, 4, 5, 6], &[3, 2]).unwrap();
    /// assert_eq!(b[[2, 1]], 6);
    /// let e = Buffer::from_vec(vec![1u8, 2, 3], &[2, 2]).unwrap_err();
    /// assert!(e.to_string().contains("3 elements") && e.to_string().contains("4"));
    /// ```
    pub fn from_vec(data: Vec<T>, extents: &[i32]) -> Result<Buffer<T>> {
        let (dims, count) = dense_dims(&vec![0; extents.len()], extents)?;
        if data.len() != count {
            return Err(Error::Buffer(format!(
                "from_vec: {} elements given, but extents {extents:?} need {count} elements",
                data.len()
            )));
        }
        Ok(Buffer { data, dims })
    }

    /// A buffer with the given extents (mins 0) whose element at each coordinate is
    /// `f(coordinate)`.
    ///
    /// # Panics
    /// As [`Buffer::new`].
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let b = Buffer::<i32>::from_fn(&[3, 2], |c| c[0] + 10 * c[1]);
    /// assert_eq!(b[[2, 1]], 12);
    /// ```
    #[track_caller]
    pub fn from_fn(extents: &[i32], mut f: impl FnMut(&[i32]) -> T) -> Buffer<T> {
        let mut b = Self::new(extents);
        for (slot, c) in b.data.iter_mut().zip(Coords::new(&b.dims)) {
            *slot = f(&c);
        }
        b
    }

    /// Number of dimensions.
    pub fn dimensions(&self) -> usize {
        self.dims.len()
    }

    /// The shape of dimension `d`. A dimension the buffer does not have reads as min 0,
    /// extent 1 (so a 2-D image has one channel), with the stride of the whole buffer.
    ///
    /// ```
    /// use halogen::runtime::{Buffer, BufferDim};
    /// let b = Buffer::<u8>::new(&[5, 2]);
    /// assert_eq!(b.dim(1), BufferDim { min: 0, extent: 2, stride: 5 });
    /// assert_eq!(b.dim(2).extent, 1);
    /// ```
    pub fn dim(&self, d: usize) -> BufferDim {
        self.dims.get(d).copied().unwrap_or(BufferDim {
            min: 0,
            extent: 1,
            stride: i32::try_from(self.data.len()).unwrap_or(i32::MAX),
        })
    }

    /// All dimensions, innermost first.
    pub fn dims(&self) -> &[BufferDim] {
        &self.dims
    }

    /// Extent of dimension 0 (1 if absent).
    pub fn width(&self) -> i32 {
        self.dim(0).extent
    }

    /// Extent of dimension 1 (1 if absent).
    pub fn height(&self) -> i32 {
        self.dim(1).extent
    }

    /// Extent of dimension 2 (1 if absent).
    pub fn channels(&self) -> i32 {
        self.dim(2).extent
    }

    /// First coordinate of dimension `d` (0 if absent).
    pub fn min(&self, d: usize) -> i32 {
        self.dim(d).min
    }

    /// Number of coordinates of dimension `d` (1 if absent).
    pub fn extent(&self, d: usize) -> i32 {
        self.dim(d).extent
    }

    /// All extents, innermost first.
    pub fn extents(&self) -> Vec<i32> {
        self.dims.iter().map(|d| d.extent).collect()
    }

    /// All mins, innermost first.
    pub fn mins(&self) -> Vec<i32> {
        self.dims.iter().map(|d| d.min).collect()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when some extent is zero.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Storage index of `coords` (`Σ (c_d - min_d) * stride_d`), or `None` if the number of
    /// coordinates is wrong or one is out of range.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let b = Buffer::<u8>::with_min(&[1, 1], &[4, 4]);
    /// assert_eq!(b.index_of(&[2, 3]), Some(9));
    /// assert_eq!(b.index_of(&[0, 3]), None);
    /// ```
    pub fn index_of(&self, coords: &[i32]) -> Option<usize> {
        flat_index(&self.dims, coords)
    }

    /// The element at `coords`, or `None` if outside the buffer (or the number of
    /// coordinates differs from the number of dimensions).
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let b = Buffer::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    /// assert_eq!(b.get(&[1]), Some(2.0));
    /// assert_eq!(b.get(&[-1]), None);
    /// ```
    pub fn get(&self, coords: &[i32]) -> Option<T> {
        self.index_of(coords).map(|i| self.data[i])
    }

    /// Writes `value` at `coords`; `Error::Buffer` naming the coordinates and the buffer's
    /// region if outside.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let mut b = Buffer::<u8>::new(&[2, 2]);
    /// b.set(&[1, 1], 9).unwrap();
    /// let e = b.set(&[2, 0], 1).unwrap_err();
    /// assert!(e.to_string().contains("[2, 0]") && e.to_string().contains("[0, 2) x [0, 2)"));
    /// ```
    pub fn set(&mut self, coords: &[i32], value: T) -> Result<()> {
        match self.index_of(coords) {
            Some(i) => {
                self.data[i] = value;
                Ok(())
            }
            None => Err(Error::Buffer(format!(
                "set: coordinates {coords:?} are outside the buffer, whose region is {}",
                describe_region(&self.dims)
            ))),
        }
    }

    #[track_caller]
    fn index_or_panic(&self, coords: &[i32]) -> usize {
        match self.index_of(coords) {
            Some(i) => i,
            None => {
                panic!("buffer index {coords:?} out of range: the buffer's region is {}", describe_region(&self.dims))
            }
        }
    }

    /// The elements in storage order (dimension 0 fastest).
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements in storage order, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The elements in storage order, by value.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// A new dense buffer holding the sub-region `min .. min + extent` of dimension `d` (the
    /// other dimensions whole). Coordinates are kept: element `[x, y]` of the crop is
    /// element `[x, y]` of `self`. `Err` naming the dimension and the numbers if the region
    /// is not inside the buffer.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let b = Buffer::<i32>::from_fn(&[4, 4], |c| c[0] + 10 * c[1]);
    /// let c = b.crop(1, 2, 2).unwrap();
    /// assert_eq!((c.min(1), c.extent(1), c.len()), (2, 2, 8));
    /// assert_eq!(c[[3, 2]], 23);
    /// assert!(b.crop(0, 3, 2).is_err());
    /// ```
    pub fn crop(&self, d: usize, min: i32, extent: i32) -> Result<Buffer<T>> {
        let Some(dim) = self.dims.get(d) else {
            return Err(Error::Buffer(format!(
                "crop: dimension {d} does not exist; the buffer has {} dimensions",
                self.dims.len()
            )));
        };
        if extent < 0
            || (min as i64) < dim.min as i64
            || min as i64 + extent as i64 > dim.min as i64 + dim.extent as i64
        {
            return Err(Error::Buffer(format!(
                "crop: dimension {d}: region min {min}, extent {extent} is not inside the buffer's min {}, extent {}",
                dim.min, dim.extent
            )));
        }
        let mut mins = self.mins();
        let mut extents = self.extents();
        mins[d] = min;
        extents[d] = extent;
        let mut out = Self::try_with_min(&mins, &extents)?;
        // Copy run by run: a run is everything below dimension d+1 that lies in the crop.
        let inner = dim.stride as usize; // elements per step of dimension d
        let run = inner * extent as usize;
        let outer_step = inner * dim.extent as usize;
        let skip = inner * (min - dim.min) as usize;
        if run > 0 {
            for (o, chunk) in out.data.chunks_mut(run).enumerate() {
                let start = o * outer_step + skip;
                chunk.copy_from_slice(&self.data[start..start + run]);
            }
        }
        Ok(out)
    }

    /// Moves the coordinate origin: adds `delta[d]` to the min of dimension `d` (for the
    /// first `delta.len()` dimensions). The data do not move.
    ///
    /// # Panics
    /// If `delta` has more values than the buffer has dimensions, or a min would overflow.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let mut b = Buffer::<u8>::new(&[4, 4]);
    /// b.translate(&[10, -2]);
    /// assert_eq!((b.min(0), b.min(1)), (10, -2));
    /// ```
    #[track_caller]
    pub fn translate(&mut self, delta: &[i32]) -> &mut Self {
        assert!(
            delta.len() <= self.dims.len(),
            "translate: {} values given for a buffer of {} dimensions",
            delta.len(),
            self.dims.len()
        );
        let mins: Vec<i32> = self
            .mins()
            .iter()
            .zip(delta.iter().chain(std::iter::repeat(&0)))
            .map(|(&m, &dl)| m.checked_add(dl).unwrap_or_else(|| panic!("translate: min {m} + {dl} overflows i32")))
            .collect();
        self.set_min(&mins)
    }

    /// Sets the min of dimension `d` to `mins[d]` (for the first `mins.len()` dimensions).
    /// The data do not move.
    ///
    /// # Panics
    /// If `mins` has more values than the buffer has dimensions, or a dimension's last
    /// coordinate would not fit in `i32`.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let mut b = Buffer::<u8>::new(&[4, 4]);
    /// b.set_min(&[1, 1]);
    /// assert_eq!(b.get(&[0, 0]), None);
    /// assert_eq!(b.get(&[4, 4]), Some(0));
    /// ```
    #[track_caller]
    pub fn set_min(&mut self, mins: &[i32]) -> &mut Self {
        assert!(
            mins.len() <= self.dims.len(),
            "set_min: {} values given for a buffer of {} dimensions",
            mins.len(),
            self.dims.len()
        );
        for (d, (dim, &m)) in self.dims.iter_mut().zip(mins).enumerate() {
            assert!(
                m as i64 + dim.extent as i64 - 1 <= i32::MAX as i64,
                "set_min: dimension {d}: min {m} + extent {} goes past the largest i32 coordinate",
                dim.extent
            );
            dim.min = m;
        }
        self
    }

    /// Sets every element to `value`.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let mut b = Buffer::<u8>::new(&[3]);
    /// b.fill(7);
    /// assert_eq!(b.as_slice(), &[7, 7, 7]);
    /// ```
    pub fn fill(&mut self, value: T) {
        self.data.fill(value)
    }

    /// Every coordinate of the buffer, in storage order (dimension 0 fastest).
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let b = Buffer::<u8>::with_min(&[1, 0], &[2, 2]);
    /// let all: Vec<Vec<i32>> = b.coords().collect();
    /// assert_eq!(all, vec![vec![1, 0], vec![2, 0], vec![1, 1], vec![2, 1]]);
    /// ```
    pub fn coords(&self) -> Coords {
        Coords::new(&self.dims)
    }

    /// A type-erased, read-only view of the storage for the compiler's back ends.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// use halogen::Type;
    /// let b = Buffer::from_vec(vec![1u16, 2], &[2]).unwrap();
    /// let r = b.raw();
    /// assert_eq!((r.ty, r.bytes.len(), r.len()), (Type::u16(), 4, 2));
    /// ```
    pub fn raw(&self) -> RawBuffer<'_> {
        RawBuffer { ty: T::TYPE, dims: self.dims.clone(), bytes: bytemuck::cast_slice(&self.data), device: None }
    }

    /// A type-erased, writable view of the storage for the compiler's back ends.
    ///
    /// ```
    /// use halogen::runtime::Buffer;
    /// let mut b = Buffer::<u16>::new(&[2]);
    /// b.raw_mut().bytes[2..4].copy_from_slice(&7u16.to_ne_bytes());
    /// assert_eq!(b[[1]], 7);
    /// ```
    pub fn raw_mut(&mut self) -> RawBufferMut<'_> {
        RawBufferMut {
            ty: T::TYPE,
            dims: self.dims.clone(),
            bytes: bytemuck::cast_slice_mut(&mut self.data),
            device: None,
        }
    }
}

impl<T: Element, const N: usize> Index<[i32; N]> for Buffer<T> {
    type Output = T;
    /// # Panics
    /// If the coordinates are outside the buffer or `N` is not the number of dimensions.
    #[track_caller]
    fn index(&self, coords: [i32; N]) -> &T {
        &self.data[self.index_or_panic(&coords)]
    }
}

impl<T: Element, const N: usize> IndexMut<[i32; N]> for Buffer<T> {
    /// # Panics
    /// If the coordinates are outside the buffer or `N` is not the number of dimensions.
    #[track_caller]
    fn index_mut(&mut self, coords: [i32; N]) -> &mut T {
        let i = self.index_or_panic(&coords);
        &mut self.data[i]
    }
}

impl<T: Element> fmt::Debug for Buffer<T> {
    // Images are large: show the shape and the first few elements only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 16;
        write!(
            f,
            "Buffer<{}>({}; {:?}",
            T::TYPE,
            describe_region(&self.dims),
            &self.data[..self.data.len().min(SHOWN)]
        )?;
        if self.data.len() > SHOWN {
            write!(f, " ... {} more", self.data.len() - SHOWN)?;
        }
        write!(f, ")")
    }
}

/// Iterator over the coordinates of a buffer, dimension 0 fastest (see [`Buffer::coords`]).
#[derive(Clone, Debug)]
pub struct Coords {
    mins: Vec<i32>,
    ends: Vec<i64>,
    next: Option<Vec<i32>>,
}

impl Coords {
    fn new(dims: &[BufferDim]) -> Coords {
        let empty = dims.iter().any(|d| d.extent <= 0);
        let mins: Vec<i32> = dims.iter().map(|d| d.min).collect();
        Coords {
            ends: dims.iter().map(|d| d.min as i64 + d.extent as i64).collect(),
            next: (!empty).then(|| mins.clone()),
            mins,
        }
    }
}

impl Iterator for Coords {
    type Item = Vec<i32>;
    fn next(&mut self) -> Option<Vec<i32>> {
        let cur = self.next.take()?;
        let mut n = cur.clone();
        for d in 0..n.len() {
            if (n[d] as i64) + 1 < self.ends[d] {
                n[d] += 1;
                self.next = Some(n);
                return Some(cur);
            }
            n[d] = self.mins[d];
        }
        // every dimension wrapped: `cur` was the last coordinate
        Some(cur)
    }
}

/// A type-erased, read-only view of a buffer's storage: element type, shape and bytes
/// (native endianness). The flat element index of coordinate `c` is
/// `Σ (c_d - min_d) * stride_d`.
///
/// ```
/// use halogen::runtime::Buffer;
/// let b = Buffer::<i32>::from_fn(&[3, 2], |c| c[0] + 10 * c[1]);
/// let r = b.raw();
/// let i = r.index_of(&[2, 1]).unwrap();
/// let v = i32::from_ne_bytes(r.bytes[i * 4..i * 4 + 4].try_into().unwrap());
/// assert_eq!(v, 12);
/// ```
#[derive(Clone, Debug)]
pub struct RawBuffer<'a> {
    /// Element type.
    pub ty: Type,
    /// Shape, innermost first.
    pub dims: Vec<BufferDim>,
    /// The elements' bytes (empty for a buffer in device memory).
    pub bytes: &'a [u8],
    /// The device memory that holds the elements instead, for a
    /// [`DeviceBuffer`](crate::runtime::gpu::DeviceBuffer).
    pub device: Option<DeviceRef>,
}

/// Where a buffer's elements are in device memory: the device API, the memory's handle and
/// its size in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceRef {
    /// The device API the memory belongs to.
    pub api: crate::runtime::gpu::Api,
    /// The memory's handle.
    pub mem: u64,
    /// Elements the memory holds.
    pub len: usize,
}

impl RawBuffer<'_> {
    /// Number of elements (on the device for a buffer in device memory).
    pub fn len(&self) -> usize {
        match self.device {
            Some(d) => d.len,
            None => self.bytes.len() / self.ty.bytes().max(1),
        }
    }
    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Flat element index of `coords`, or `None` if outside (see [`Buffer::index_of`]).
    pub fn index_of(&self, coords: &[i32]) -> Option<usize> {
        flat_index(&self.dims, coords)
    }
}

/// A type-erased, writable view of a buffer's storage (see [`RawBuffer`]).
///
/// ```
/// use halogen::runtime::Buffer;
/// let mut b = Buffer::<u8>::new(&[4]);
/// let r = b.raw_mut();
/// let i = r.index_of(&[3]).unwrap();
/// r.bytes[i] = 9;
/// assert_eq!(b[[3]], 9);
/// ```
#[derive(Debug)]
pub struct RawBufferMut<'a> {
    /// Element type.
    pub ty: Type,
    /// Shape, innermost first.
    pub dims: Vec<BufferDim>,
    /// The elements' bytes (empty for a buffer in device memory).
    pub bytes: &'a mut [u8],
    /// The device memory that holds the elements instead (see [`RawBuffer::device`]).
    pub device: Option<DeviceRef>,
}

impl RawBufferMut<'_> {
    /// Number of elements (on the device for a buffer in device memory).
    pub fn len(&self) -> usize {
        match self.device {
            Some(d) => d.len,
            None => self.bytes.len() / self.ty.bytes().max(1),
        }
    }
    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Flat element index of `coords`, or `None` if outside (see [`Buffer::index_of`]).
    pub fn index_of(&self, coords: &[i32]) -> Option<usize> {
        flat_index(&self.dims, coords)
    }
    /// A read-only view of the same storage.
    pub fn as_raw(&self) -> RawBuffer<'_> {
        RawBuffer { ty: self.ty, dims: self.dims.clone(), bytes: self.bytes, device: self.device }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_strides() {
        let b = Buffer::<u8>::new(&[3, 4, 5]);
        assert_eq!(b.dims().iter().map(|d| d.stride).collect::<Vec<_>>(), vec![1, 3, 12]);
        assert_eq!(b.len(), 60);
        assert_eq!((b.width(), b.height(), b.channels()), (3, 4, 5));
        let z = Buffer::<f64>::new(&[]);
        assert_eq!((z.len(), z.dimensions()), (1, 0));
        assert_eq!(z.get(&[]), Some(0.0));
        let e = Buffer::<u8>::new(&[0, 3]);
        assert!(e.is_empty());
        assert_eq!(e.coords().count(), 0);
    }

    #[test]
    fn errors_name_the_numbers() {
        let e = Buffer::<u8>::try_new(&[1, 2, -3]).unwrap_err().to_string();
        assert!(e.contains("dimension 2") && e.contains("-3"), "{e}");
        let e = Buffer::<u8>::try_new(&[1; 9]).unwrap_err().to_string();
        assert!(e.contains("9 dimensions"), "{e}");
        let e = Buffer::<u8>::try_new(&[65536, 65536, 2]).unwrap_err().to_string();
        assert!(e.contains("stride"), "{e}");
        let e = Buffer::<u8>::try_with_min(&[i32::MAX], &[2]).unwrap_err().to_string();
        assert!(e.contains("dimension 0"), "{e}");
        let e = Buffer::<u8>::new(&[2, 2]).crop(2, 0, 1).unwrap_err().to_string();
        assert!(e.contains("dimension 2"), "{e}");
        let e = Buffer::<u8>::new(&[2, 2]).crop(1, -1, 2).unwrap_err().to_string();
        assert!(e.contains("min -1") && e.contains("extent 2"), "{e}");
    }

    #[test]
    #[should_panic(expected = "negative extent")]
    fn new_panics_on_negative_extent() {
        let _ = Buffer::<u8>::new(&[-1]);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn index_panics_out_of_range() {
        let b = Buffer::<u8>::new(&[2, 2]);
        let _ = b[[2, 0]];
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn index_panics_on_wrong_dimension_count() {
        let b = Buffer::<u8>::new(&[2, 2]);
        let _ = b[[1]];
    }

    #[test]
    fn crop_copies_each_dimension() {
        let b = Buffer::<i32>::from_fn(&[4, 3, 2], |c| c[0] + 10 * c[1] + 100 * c[2]);
        for d in 0..3 {
            for min in 0..b.extent(d) {
                for extent in 0..=b.extent(d) - min {
                    let c = b.crop(d, min, extent).unwrap();
                    assert_eq!(c.extent(d), extent);
                    for co in c.coords() {
                        assert_eq!(c.get(&co), b.get(&co), "crop({d}, {min}, {extent}) at {co:?}");
                    }
                    assert_eq!(c.len(), c.coords().count());
                }
            }
        }
        // cropping twice keeps coordinates
        let c = b.crop(0, 1, 2).unwrap().crop(1, 1, 1).unwrap();
        assert_eq!(c.as_slice(), &[11, 12, 111, 112]);
    }

    #[test]
    fn translate_and_raw() {
        let mut b = Buffer::<u16>::from_fn(&[2, 2], |c| (c[0] + 2 * c[1]) as u16);
        b.translate(&[5]);
        assert_eq!(b.get(&[6, 1]), Some(3));
        let r = b.raw();
        assert_eq!(r.index_of(&[6, 1]), Some(3));
        assert_eq!(r.dims[0].min, 5);
        let m = b.raw_mut();
        m.bytes[0] = 9;
        assert_eq!(m.as_raw().len(), 4);
        assert_eq!(b[[5, 0]], 9);
        assert!(format!("{b:?}").contains("[5, 7) x [0, 2)"));
    }
}
