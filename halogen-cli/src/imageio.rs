//! Loading and saving pictures (PNG, JPEG, TIFF; 8 and 16 bits) and NumPy arrays (`.npy`)
//! as Halogen buffers, and turning what was loaded into an app's inputs.

use crate::CliError;
use halogen::prelude::*;
use halogen_apps::{App, DynBuffer, InputSpec};
use image::{DynamicImage, ImageBuffer, Luma, Rgb};
use std::path::Path;

/// The file formats `save` writes, from the path's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Png,
    Jpeg,
    Tiff,
    Npy,
}

fn format_of(path: &Path) -> Result<Format, CliError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "png" => Ok(Format::Png),
        "jpg" | "jpeg" => Ok(Format::Jpeg),
        "tif" | "tiff" => Ok(Format::Tiff),
        "npy" => Ok(Format::Npy),
        _ => {
            Err(CliError::new(format!("{}: unknown file format '{ext}'; use .png, .jpg, .tif or .npy", path.display())))
        }
    }
}

/// What an input file held.
#[derive(Clone, Debug)]
pub enum Loaded {
    /// A NumPy array, taken as it is: shape `(H, W)` is the buffer `[W, H]`, `(C, H, W)` is
    /// `[W, H, C]`.
    Array(DynBuffer),
    /// A picture.
    Picture {
        /// Planar RGB `f32` in `[0, 1]`, `(x, y, c)` (gray pictures get three equal channels).
        rgb: Buffer<f32>,
        /// For a one-channel (gray) file of 8 or 16 bits: its values as stored, `u8` or `u16`.
        gray: Option<DynBuffer>,
    },
}

/// Loads an input: `.npy` as an array, anything else as a picture (PNG, JPEG or TIFF).
pub fn load(path: &Path) -> Result<Loaded, CliError> {
    if path.is_dir() {
        return Err(CliError::new(format!("{}: is a folder; give an input file", path.display())));
    }
    let is_npy = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if is_npy {
        let b = halogen_apps::npy::read(path)
            .map_err(|e| CliError::new(format!("{}: cannot read the array: {e}", path.display())))?;
        if b.is_empty() {
            return Err(CliError::new(format!("{}: the array is empty", path.display())));
        }
        return Ok(Loaded::Array(b));
    }
    let img = open(path)?;
    let gray = match &img {
        DynamicImage::ImageLuma8(g) => {
            Some(Buffer::from_vec(g.as_raw().clone(), &[g.width() as i32, g.height() as i32]).map(DynBuffer::from))
        }
        DynamicImage::ImageLuma16(g) => {
            Some(Buffer::from_vec(g.as_raw().clone(), &[g.width() as i32, g.height() as i32]).map(DynBuffer::from))
        }
        _ => None,
    }
    .transpose()
    .map_err(CliError::from_display)?;
    Ok(Loaded::Picture { rgb: planar_rgb(path, &img)?, gray })
}

fn open(path: &Path) -> Result<DynamicImage, CliError> {
    image::open(path).map_err(|e| CliError::new(format!("{}: cannot read the image: {e}", path.display())))
}

/// Loads a picture as planar RGB `f32` in `[0, 1]`, `(x, y, c)` (gray pictures get three
/// equal channels). 16-bit files keep their precision.
pub fn load_rgb(path: &Path) -> Result<Buffer<f32>, CliError> {
    planar_rgb(path, &open(path)?)
}

fn planar_rgb(path: &Path, img: &DynamicImage) -> Result<Buffer<f32>, CliError> {
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

/// Decodes a picture held in memory (for pictures built into the binary).
pub fn decode_rgb(what: &str, bytes: &[u8]) -> Result<Buffer<f32>, CliError> {
    let img =
        image::load_from_memory(bytes).map_err(|e| CliError::new(format!("{what}: cannot decode the image: {e}")))?;
    planar_rgb(Path::new(what), &img)
}

/// Whether `b` has the element type and shape of input `spec`: `(x, y)` for one channel,
/// `(x, y, channels)` otherwise.
fn fits(b: &DynBuffer, spec: &InputSpec) -> bool {
    let e = b.extents();
    // `channels == 0`: not a picture; the app checks the shape itself.
    b.ty() == spec.ty
        && match spec.channels {
            0 => true,
            1 => e.len() == 2,
            c => e.len() == 3 && e[2] == c,
        }
}

/// Describes what an input expects, for error messages.
fn expected(spec: &InputSpec) -> String {
    let shape = match spec.channels {
        0 => "as described".to_string(),
        1 => "(H, W)".to_string(),
        c => format!("({c}, H, W)"),
    };
    format!("{} values of NumPy shape {shape} ({})", spec.ty, spec.values)
}

/// An app's inputs from loaded files, in the app's input order.
///
/// - One picture for an app with several inputs makes all of them, as the app makes them
///   from a picture (`App::inputs_from_rgb`).
/// - Otherwise there is one file per input. An array is passed as it is; its type and
///   shape must be the input's.
/// - A one-channel 8- or 16-bit picture whose type is the input's, for a one-channel input,
///   is passed with its values unchanged (a 16-bit gray PNG holding a raw Bayer mosaic is
///   camera_pipe's input as it is).
/// - Any other picture is converted: as the app converts pictures (to gray, to the input's
///   type, to a mosaic, ...) for an app with one input, to the input's channels and type
///   for one of several inputs.
pub fn app_inputs(app: &dyn App, loaded: Vec<Loaded>) -> Result<Vec<DynBuffer>, CliError> {
    let specs = app.input_specs();
    if let [Loaded::Picture { rgb, .. }] = loaded.as_slice() {
        if specs.len() > 1 {
            return Ok(app.inputs_from_rgb(rgb)?);
        }
    }
    if loaded.len() != specs.len() {
        return Err(count_error(app, &specs, &loaded));
    }
    let mut inputs = Vec::with_capacity(specs.len());
    for (spec, l) in specs.iter().zip(loaded) {
        inputs.push(match l {
            Loaded::Array(b) if fits(&b, spec) => b,
            Loaded::Array(b) => {
                let shape: Vec<String> = halogen_apps::npy::numpy_shape(&b).iter().map(|s| s.to_string()).collect();
                return Err(CliError::new(format!(
                    "{}'s input '{}' takes {}, but the array holds {} values of shape ({})",
                    app.name(),
                    spec.name,
                    expected(spec),
                    b.ty(),
                    shape.join(", ")
                )));
            }
            Loaded::Picture { gray: Some(g), .. } if spec.channels == 1 && fits(&g, spec) => g,
            Loaded::Picture { rgb, .. } if specs.len() == 1 => app
                .inputs_from_rgb(&rgb)?
                .pop()
                .ok_or_else(|| CliError::new(format!("{} makes no input from a picture", app.name())))?,
            Loaded::Picture { rgb, .. } => halogen_apps::picture_input(app.name(), &rgb, spec)?,
        });
    }
    Ok(inputs)
}

/// Why `loaded` are not as many files as `specs` are inputs.
fn count_error(app: &dyn App, specs: &[InputSpec], loaded: &[Loaded]) -> CliError {
    let n = specs.len();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let takes = format!("{} takes {n} input{} ({})", app.name(), if n == 1 { "" } else { "s" }, names.join(", "));
    let given = match loaded {
        [] => "no file was given".to_string(),
        [Loaded::Array(_)] => "the one file given is an array, which makes one input".to_string(),
        [_] => "1 file was given".to_string(),
        _ => format!("{} files were given", loaded.len()),
    };
    if n == 1 {
        CliError::new(format!("{takes}, but {given}"))
    } else {
        CliError::new(format!("{takes}, but {given}; give {n} files in that order, or one picture to make them all"))
    }
}

/// Checks, before anything is computed, that `path` can be an output: a known format, not
/// a folder, in a folder that exists.
pub fn check_output(path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(CliError::new(format!("{}: is a folder; give the output file's name", path.display())));
    }
    format_of(path)?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(CliError::new(format!(
            "{}: cannot write there: {} is not an existing folder",
            path.display(),
            parent.display()
        )));
    }
    Ok(())
}

/// The width, height and channels of a buffer of these extents saved as a picture: gray
/// `(x, y)` or `(x, y, 1)`, or RGB `(x, y, 3)`.
fn picture_shape(extents: &[i32]) -> Option<(i32, i32, usize)> {
    match extents {
        [w, h] | [w, h, 1] => Some((*w, *h, 1)),
        [w, h, 3] => Some((*w, *h, 3)),
        _ => None,
    }
}

/// Checks that `app`'s output of these extents can be saved as a picture (else it must go
/// to a `.npy` file).
pub fn check_picture(app: &dyn App, extents: &[i32]) -> Result<(), CliError> {
    match picture_shape(extents) {
        Some(_) => Ok(()),
        None => Err(CliError::new(format!(
            "{}'s output has extents {extents:?}, which is not a picture (gray WxH or RGB WxHx3); write it to a \
             .npy file",
            app.name()
        ))),
    }
}

/// Whether `path` names a `.npy` file (which [`save`] writes with the values unchanged).
pub fn is_npy(path: &Path) -> bool {
    format_of(path).is_ok_and(|f| f == Format::Npy)
}

/// Saves `b`: as a NumPy array for `.npy` (any shape, the values unchanged), else as a
/// picture (gray `(x, y)` or planar RGB `(x, y, 3)`): `u8` as 8 bits, `u16` as 16 bits,
/// `f32` (clamped to `[0, 1]`) as 16 bits; JPEG is always 8 bits.
pub fn save(path: &Path, b: &DynBuffer) -> Result<(), CliError> {
    let format = format_of(path)?;
    if format == Format::Npy {
        return halogen_apps::npy::write(path, b).map_err(|e| {
            let cause = match e {
                // The path is said once, first.
                halogen_apps::npy::NpyError::Io { source, .. } => source.to_string(),
                e => e.to_string(),
            };
            CliError::new(format!("{}: cannot write the array: {cause}", path.display()))
        });
    }
    let ext = b.extents();
    let (w, h, channels) = picture_shape(&ext).ok_or_else(|| {
        CliError::new(format!("cannot save a buffer of extents {ext:?} as a picture (gray WxH or RGB WxHx3 only)"))
    })?;
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
        // `.npy` was written above.
        Format::Tiff | Format::Npy => image::ImageFormat::Tiff,
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
    fn npy_round_trips_any_type_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        let b: DynBuffer = Buffer::<f32>::from_fn(&[4, 3, 2], |c| c[0] as f32 * 3.5 - c[2] as f32).into();
        assert!(is_npy(&p));
        save(&p, &b).unwrap();
        match load(&p).unwrap() {
            Loaded::Array(back) => assert_eq!(back, b),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn inputs_from_arrays_and_pictures() {
        let _apps = crate::app_test_lock();
        let dir = tempfile::tempdir().unwrap();
        let raw = Buffer::<u16>::from_fn(&[8, 6], |c| (c[0] * 4000 + c[1] * 17) as u16);
        // A 16-bit gray PNG is camera_pipe's mosaic as it is.
        let png = dir.path().join("raw.png");
        save(&png, &raw.clone().into()).unwrap();
        let cam = halogen_apps::create("camera_pipe", &Default::default()).unwrap();
        let inputs = app_inputs(cam.as_ref(), vec![load(&png).unwrap()]).unwrap();
        assert_eq!(inputs, vec![DynBuffer::from(raw.clone())]);
        // The same values as an array, and an array of the wrong type.
        let npy = dir.path().join("raw.npy");
        save(&npy, &raw.clone().into()).unwrap();
        assert_eq!(app_inputs(cam.as_ref(), vec![load(&npy).unwrap()]).unwrap(), inputs);
        let hist = halogen_apps::create("hist_eq", &Default::default()).unwrap();
        let e = app_inputs(hist.as_ref(), vec![load(&npy).unwrap()]).unwrap_err().to_string();
        assert!(e.contains("u8") && e.contains("(6, 8)"), "{e}");
        // An RGB picture is converted: to gray u8 for hist_eq.
        let rgb = dir.path().join("rgb.png");
        save(&rgb, &Buffer::<u8>::from_fn(&[5, 4, 3], |c| (c[0] * 40 + c[2]) as u8).into()).unwrap();
        let got = app_inputs(hist.as_ref(), vec![load(&rgb).unwrap()]).unwrap();
        assert_eq!((got[0].ty(), got[0].extents()), (Type::u8(), vec![5, 4]));
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
