//! Reading and writing NumPy `.npy` files (format versions 1 to 3, little-endian `u8`,
//! `u16`, `i32`, `f32` arrays in C order), to exchange images with NumPy and Halide.
//!
//! NumPy's axes are reversed relative to Halogen's: an array of shape `(H, W)` is the
//! buffer `[W, H]` (`x` fastest), `(C, H, W)` is `[W, H, C]`. The data need no shuffling,
//! since C order with the last axis fastest is exactly Halogen's dense layout.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{npy, DynBuffer};
//! let b = DynBuffer::from(Buffer::<u16>::from_fn(&[3, 2], |c| (c[0] + 10 * c[1]) as u16));
//! let bytes = npy::to_bytes(&b);
//! assert!(bytes.starts_with(b"\x93NUMPY"));
//! let back = npy::from_bytes(&bytes).unwrap();
//! assert_eq!(back, b);
//! assert_eq!(npy::numpy_shape(&back), vec![2, 3]);
//! ```

use crate::DynBuffer;
use halogen::prelude::*;
use std::path::Path;

/// Why an `.npy` file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The bytes are not an `.npy` array this reader supports.
    #[error("not a supported .npy array: {0}")]
    Format(String),
}

const MAGIC: &[u8] = b"\x93NUMPY";

/// The NumPy shape of a buffer: its extents reversed.
pub fn numpy_shape(b: &DynBuffer) -> Vec<i32> {
    b.extents().into_iter().rev().collect()
}

/// Reads an `.npy` file.
pub fn read(path: impl AsRef<Path>) -> Result<DynBuffer, NpyError> {
    let p = path.as_ref();
    let bytes = std::fs::read(p).map_err(|source| NpyError::Io { path: p.display().to_string(), source })?;
    from_bytes(&bytes)
}

/// Writes `b` as an `.npy` file (version 1.0).
pub fn write(path: impl AsRef<Path>, b: &DynBuffer) -> Result<(), NpyError> {
    let p = path.as_ref();
    std::fs::write(p, to_bytes(b)).map_err(|source| NpyError::Io { path: p.display().to_string(), source })
}

/// The value of `key` in the header dictionary (`{'descr': '<u2', ...}`): the text after
/// `'key':` up to the next top-level comma or closing brace.
fn dict_value<'a>(header: &'a str, key: &str) -> Result<&'a str, NpyError> {
    let pat = format!("'{key}'");
    let start = header.find(&pat).ok_or_else(|| NpyError::Format(format!("header has no '{key}': {header}")))?;
    let rest = header[start + pat.len()..].trim_start();
    let rest = rest.strip_prefix(':').ok_or_else(|| NpyError::Format(format!("no ':' after '{key}'")))?.trim_start();
    let mut depth = 0i32;
    for (i, ch) in rest.char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Ok(rest[..i].trim()),
            _ => {}
        }
        if depth < 0 {
            return Err(NpyError::Format(format!("unbalanced brackets in '{key}'")));
        }
    }
    Ok(rest.trim())
}

/// Parses the bytes of an `.npy` file. A shape that needs more data than there are bytes,
/// or an axis longer than a buffer dimension, is an error that gives the numbers, found
/// before anything is allocated.
pub fn from_bytes(bytes: &[u8]) -> Result<DynBuffer, NpyError> {
    if bytes.len() < 10 || !bytes.starts_with(MAGIC) {
        return Err(NpyError::Format("missing the \\x93NUMPY magic".into()));
    }
    let major = bytes[6];
    let (hlen, hstart) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(NpyError::Format("truncated header".into()));
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(NpyError::Format(format!("format version {v} is not supported"))),
    };
    let header = bytes
        .get(hstart..hstart + hlen)
        .ok_or_else(|| NpyError::Format("truncated header".into()))
        .and_then(|h| std::str::from_utf8(h).map_err(|_| NpyError::Format("header is not text".into())))?;
    let descr = dict_value(header, "descr")?.trim_matches(|c| c == '\'' || c == '"');
    let fortran = dict_value(header, "fortran_order")?;
    if fortran != "False" {
        return Err(NpyError::Format("Fortran-order arrays are not supported".into()));
    }
    let shape_text = dict_value(header, "shape")?;
    let shape: Vec<u64> = shape_text
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<u64>()
                .map_err(|_| NpyError::Format(format!("shape {shape_text}: '{s}' is not a non-negative integer")))
        })
        .collect::<Result<_, _>>()?;
    let ty = match descr {
        "|u1" | "<u1" | "u1" => Type::u8(),
        "<u2" => Type::u16(),
        "<i4" => Type::i32(),
        "<f4" => Type::f32(),
        d => return Err(NpyError::Format(format!("dtype '{d}' is not supported (u1, <u2, <i4, <f4 are)"))),
    };
    let size = ty.bytes() as u64;
    if let Some((d, &e)) = shape.iter().enumerate().find(|(_, &e)| e > i32::MAX as u64) {
        return Err(NpyError::Format(format!(
            "shape {shape_text}: axis {d} has {e} elements, more than the {} a buffer dimension holds",
            i32::MAX
        )));
    }
    // Counted in u128 and checked against the file before anything is allocated: a
    // header may claim any shape.
    let count = shape.iter().try_fold(1u128, |n, &e| n.checked_mul(u128::from(e)));
    let data = &bytes[hstart + hlen..];
    let need = count.and_then(|n| n.checked_mul(u128::from(size)));
    if need.is_none_or(|need| need > data.len() as u128) {
        let elements = match count {
            Some(n) => n.to_string(),
            None => format!("about {:.3e}", shape.iter().map(|&e| e as f64).product::<f64>()),
        };
        let bytes = match need {
            Some(n) => n.to_string(),
            None => format!("about {:.3e}", shape.iter().map(|&e| e as f64).product::<f64>() * size as f64),
        };
        let unit = if size == 1 { "byte" } else { "bytes" };
        return Err(NpyError::Format(format!(
            "shape {shape_text} has {elements} elements of {size} {unit} ({bytes} bytes), but the file holds {} \
             data bytes",
            data.len()
        )));
    }
    let extents: Vec<i32> = shape.iter().rev().map(|&e| e as i32).collect();
    let count = count.unwrap_or(0) as usize;
    fn take<T: Element>(data: &[u8], count: usize, extents: &[i32]) -> Result<Buffer<T>, NpyError> {
        let size = std::mem::size_of::<T>();
        let need = count * size;
        // Read into a buffer from `Buffer::try_new` (large ones get huge pages) rather than
        // a collected Vec, so that pipelines read files as fast as their own buffers.
        let mut b = Buffer::<T>::try_new(extents).map_err(|e| NpyError::Format(e.to_string()))?;
        for (slot, bytes) in b.as_mut_slice().iter_mut().zip(data[..need].chunks_exact(size)) {
            *slot = bytemuck_read::<T>(bytes);
        }
        Ok(b)
    }
    Ok(match ty {
        t if t == Type::u8() => DynBuffer::U8(take::<u8>(data, count, &extents)?),
        t if t == Type::u16() => DynBuffer::U16(take::<u16>(data, count, &extents)?),
        t if t == Type::i32() => DynBuffer::I32(take::<i32>(data, count, &extents)?),
        _ => DynBuffer::F32(take::<f32>(data, count, &extents)?),
    })
}

/// One little-endian element from its bytes (element types are plain old data).
fn bytemuck_read<T: Element>(b: &[u8]) -> T {
    bytemuck::pod_read_unaligned(b)
}

#[cfg(not(target_endian = "little"))]
compile_error!("the .npy reader assumes a little-endian machine");

/// The bytes of an `.npy` file (version 1.0) holding `b`.
pub fn to_bytes(b: &DynBuffer) -> Vec<u8> {
    let (descr, data): (&str, Vec<u8>) = match b {
        DynBuffer::U8(b) => ("|u1", b.as_slice().to_vec()),
        DynBuffer::U16(b) => ("<u2", b.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect()),
        DynBuffer::I32(b) => ("<i4", b.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect()),
        DynBuffer::F32(b) => ("<f4", b.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect()),
    };
    let shape = numpy_shape(b);
    let shape = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad with spaces so that the data start on a multiple of 64 bytes; end with '\n'.
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_type_and_rank() {
        let bufs: Vec<DynBuffer> = vec![
            Buffer::<u8>::from_fn(&[5], |c| c[0] as u8).into(),
            Buffer::<u16>::from_fn(&[3, 4], |c| (c[0] * 1000 + c[1]) as u16).into(),
            Buffer::<i32>::from_fn(&[2, 3, 2], |c| c[0] - c[1] * c[2]).into(),
            Buffer::<f32>::from_fn(&[4, 2, 3], |c| c[0] as f32 * 0.5 - c[2] as f32).into(),
        ];
        for b in bufs {
            let bytes = to_bytes(&b);
            let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
            assert_eq!((10 + hlen) % 64, 0, "data aligned");
            assert_eq!(from_bytes(&bytes).unwrap(), b);
        }
    }

    #[test]
    fn reads_a_hand_written_header() {
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        for v in 0..6 {
            bytes.extend_from_slice(&(v as f32).to_le_bytes());
        }
        let b = from_bytes(&bytes).unwrap();
        assert_eq!(b.extents(), vec![3, 2]);
        assert_eq!(b.get_f64(&[2, 1]), Some(5.0));
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert!(from_bytes(b"hello").is_err());
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&[0; 8]);
        assert!(from_bytes(&bytes).unwrap_err().to_string().contains("<f8"));
    }

    fn header_only(descr: &str, shape: &str, data: usize) -> Vec<u8> {
        let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&vec![0; data]);
        bytes
    }

    #[test]
    fn huge_shapes_are_counted_without_wrapping_or_allocating() {
        let err = |descr: &str, shape: &str, data: usize| {
            from_bytes(&header_only(descr, shape, data)).unwrap_err().to_string()
        };
        let m = i32::MAX;
        assert_eq!(
            err("|u1", &format!("({m}, {m}, {m})"), 0),
            format!(
                "not a supported .npy array: shape ({m}, {m}, {m}) has 9903520300447984150353281023 elements of 1 \
                 byte (9903520300447984150353281023 bytes), but the file holds 0 data bytes"
            )
        );
        assert_eq!(
            err("<f4", "(3, 65536, 65536)", 12),
            "not a supported .npy array: shape (3, 65536, 65536) has 12884901888 elements of 4 bytes \
             (51539607552 bytes), but the file holds 12 data bytes"
        );
        // Past u128: the numbers are approximate, and still right.
        let e = err("<u2", &format!("({m}, {m}, {m}, {m}, {m})"), 0);
        assert!(e.contains("has about 4.567e46 elements of 2 bytes (about 9.134e46 bytes)"), "{e}");
        assert!(err("<f4", "(-1, 5)", 0).contains("'-1' is not a non-negative integer"));
        assert!(err("|u1", "(1, 3000000000)", 0).contains("axis 1 has 3000000000 elements"));
        assert!(err("<f8", "(2,)", 16).contains("'<f8' is not supported"));
        // Too few bytes for a small shape too.
        assert!(err("<u2", "(2, 3)", 11)
            .ends_with("has 6 elements of 2 bytes (12 bytes), but the file holds 11 data bytes"));
    }
}
