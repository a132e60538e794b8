//! Loading and saving pictures (PNG, JPEG, TIFF, 8 and 16 bits) as Halogen buffers.

use crate::CliError;
use halogen::prelude::*;
use halogen_apps::DynBuffer;
use image::{DynamicImage, ImageBuffer, Luma, Rgb};
use std::path::Path;

/// The file formats `save` writes, from the path's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Png,
    Jpeg,
    Tiff,
}

fn format_of(path: &Path) -> Result<Format, CliError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "png" => Ok(Format::Png),
        "jpg" | "jpeg" => Ok(Format::Jpeg),
        "tif" | "tiff" => Ok(Format::Tiff),
        _ => Err(CliError::new(format!("{}: unknown image format '{ext}'; use .png, .jpg or .tif", path.display()))),
    }
}

/// Loads a picture as planar RGB `f32` in `[0, 1]`, `(x, y, c)` (gray pictures get three
/// equal channels). 16-bit files keep their precision.
pub fn load_rgb(path: &Path) -> Result<Buffer<f32>, CliError> {
    let img =
        image::open(path).map_err(|e| CliError::new(format!("{}: cannot read the image: {e}", path.display())))?;
    let rgb = img.to_rgb32f();
    let (w, h) = (rgb.width() as i32, rgb.height() as i32);
    if w == 0 || h == 0 {
        return Err(CliError::new(format!("{}: the image is empty", path.display())));
    }
    let mut out = Buffer::<f32>::try_new(&[w, h, 3]).map_err(CliError::from_display)?;
    {
        let data = out.as_mut_slice();
        let plane = (w * h) as usize;
        for (i, p) in rgb.pixels().enumerate() {
            for c in 0..3 {
                data[c * plane + i] = p.0[c].clamp(0.0, 1.0);
            }
        }
    }
    Ok(out)
}

/// Saves `b` (gray `(x, y)` or planar RGB `(x, y, 3)`) as a picture: `u8` as 8 bits,
/// `u16` as 16 bits, `f32` (clamped to `[0, 1]`) as 16 bits; JPEG is always 8 bits.
pub fn save(path: &Path, b: &DynBuffer) -> Result<(), CliError> {
    let format = format_of(path)?;
    let ext = b.extents();
    let (w, h, channels) = match ext.as_slice() {
        [w, h] => (*w, *h, 1),
        [w, h, 3] => (*w, *h, 3),
        [w, h, 1] => (*w, *h, 1),
        _ => {
            return Err(CliError::new(format!(
                "cannot save a buffer of extents {ext:?} as a picture (gray WxH or RGB WxHx3 only)"
            )))
        }
    };
    let (uw, uh) = (w as u32, h as u32);
    let plane = (w * h) as usize;
    let wide = format != Format::Jpeg && b.ty() != Type::u8();
    let unit = b.to_unit_f32();
    let vals = unit.as_slice();
    let img: DynamicImage = if wide {
        let px: Vec<u16> =
            interleave(vals, plane, channels).map(|v| (v.clamp(0.0, 1.0) * 65535.0).round() as u16).collect();
        if channels == 1 {
            DynamicImage::ImageLuma16(ImageBuffer::<Luma<u16>, _>::from_raw(uw, uh, px).ok_or_else(size_error)?)
        } else {
            DynamicImage::ImageRgb16(ImageBuffer::<Rgb<u16>, _>::from_raw(uw, uh, px).ok_or_else(size_error)?)
        }
    } else {
        let px: Vec<u8> =
            interleave(vals, plane, channels).map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8).collect();
        if channels == 1 {
            DynamicImage::ImageLuma8(ImageBuffer::<Luma<u8>, _>::from_raw(uw, uh, px).ok_or_else(size_error)?)
        } else {
            DynamicImage::ImageRgb8(ImageBuffer::<Rgb<u8>, _>::from_raw(uw, uh, px).ok_or_else(size_error)?)
        }
    };
    let fmt = match format {
        Format::Png => image::ImageFormat::Png,
        Format::Jpeg => image::ImageFormat::Jpeg,
        Format::Tiff => image::ImageFormat::Tiff,
    };
    img.save_with_format(path, fmt)
        .map_err(|e| CliError::new(format!("{}: cannot write the image: {e}", path.display())))
}

fn size_error() -> CliError {
    CliError::new("internal error: pixel count does not match the image size".to_string())
}

/// Planar `(x, y, c)` values in interleaved order (`c` fastest).
fn interleave(vals: &[f32], plane: usize, channels: usize) -> impl Iterator<Item = f32> + '_ {
    (0..plane * channels).map(move |i| vals[(i % channels) * plane + i / channels])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_png_and_tiff_in_16_bits() {
        let dir = tempfile::tempdir().unwrap();
        let b = Buffer::<u16>::from_fn(&[5, 4, 3], |c| (c[0] * 1000 + c[1] * 100 + c[2] * 7) as u16);
        for name in ["a.png", "a.tif"] {
            let p = dir.path().join(name);
            save(&p, &b.clone().into()).unwrap();
            let back = load_rgb(&p).unwrap();
            for c in b.coords() {
                let v = (back[[c[0], c[1], c[2]]] * 65535.0).round() as u16;
                assert_eq!(v, b[[c[0], c[1], c[2]]], "{name} at {c:?}");
            }
        }
    }

    #[test]
    fn gray_u8_and_unknown_extension() {
        let dir = tempfile::tempdir().unwrap();
        let g = Buffer::<u8>::from_fn(&[3, 2], |c| (c[0] * 50 + c[1]) as u8);
        let p = dir.path().join("g.png");
        save(&p, &g.into()).unwrap();
        let back = load_rgb(&p).unwrap();
        assert_eq!((back[[2, 1, 0]] * 255.0).round() as u8, 101);
        assert!(save(&dir.path().join("x.bmp"), &Buffer::<u8>::new(&[1, 1]).into()).is_err());
    }
}
