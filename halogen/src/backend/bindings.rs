//! The arguments of one run, checked once for every back end: each input image and output
//! buffer against the type and dimensionality the pipeline uses, and each scalar `Param`
//! against its type. A back end receives [`Bindings`] and needs no checks of its own for
//! what the pipeline's definition says; what only it can know (a descriptor's layout, a
//! device copy) it checks itself.
//!
//! Every buffer's coordinates must lie within ±2^30 ([`COORDINATE_LIMIT`]). Loop ends,
//! vector tails and footprints are computed from them in 32 bits, and a buffer reaching
//! toward `i32::MAX` made them wrap (a vectorized output ending at `i32::MAX` wrote past
//! its heap block). With this margin, the bounds of a loop or a stencil stay representable.

use crate::error::{Error, Result};
use crate::ir::{Expr, Name};
use crate::lower::environment::{buffer_name, Environment};
use crate::runtime::{BufferDim, RawBuffer, RawBufferMut};
use std::collections::{BTreeMap, HashSet};

/// The checked arguments of one run.
#[derive(Debug)]
pub struct Bindings<'i, 'o> {
    /// Every input image the pipeline reads, by `ImageParam` name, in name order.
    pub inputs: Vec<(Name, RawBuffer<'i>)>,
    /// The output buffers, by storage name (the Func's name, or `f.0`, `f.1`, … for the
    /// values of a tuple), in the pipeline's output order.
    pub outputs: Vec<(Name, RawBufferMut<'o>)>,
    /// The shape of each output Func, by Func name: the shape its code computes over
    /// (a tuple's buffers share it).
    pub output_shapes: Vec<(Name, Vec<BufferDim>)>,
    /// Every scalar `Param` the pipeline reads, by name, with a value of its type. The
    /// shapes of the buffers (`name.min.d`, …) are not here: see [`Bindings::shape_scalars`].
    pub params: BTreeMap<Name, Expr>,
    /// The ranks of a distributed run, for a pipeline that exchanges borders.
    pub communicator: Option<std::sync::Arc<dyn crate::runtime::distributed::Communicator>>,
}

pub use crate::ir::COORDINATE_LIMIT;

/// An `Err` if dimension `d` of a buffer reaches outside the coordinates Halogen computes
/// with (`what` names the buffer in the message).
fn check_coordinates(what: &str, dims: &[BufferDim]) -> Result<()> {
    for (d, dim) in dims.iter().enumerate() {
        let (first, last) = (dim.min as i64, dim.min as i64 + dim.extent as i64 - 1);
        // An empty dimension still has a min that lowering computes with.
        let outside = first < -COORDINATE_LIMIT
            || if dim.extent > 0 { last >= COORDINATE_LIMIT } else { first > COORDINATE_LIMIT };
        if outside {
            return Err(Error::Buffer(format!(
                "{what} dimension {d} covers [{first}, {last}], outside the coordinates Halogen computes \
                 with, [{}, {}]: its loop bounds could wrap around in 32 bits",
                -COORDINATE_LIMIT,
                COORDINATE_LIMIT - 1
            )));
        }
    }
    Ok(())
}

/// The scalars `name.min.d`, `name.extent.d` and `name.stride.d` of a buffer's shape.
fn shape_of<'a>(name: &'a str, dims: &'a [BufferDim]) -> impl Iterator<Item = (String, Expr)> + 'a {
    dims.iter().enumerate().flat_map(move |(d, dim)| {
        [("min", dim.min), ("extent", dim.extent), ("stride", dim.stride)]
            .into_iter()
            .map(move |(w, v)| (format!("{name}.{w}.{d}"), Expr::i32(v as i64)))
    })
}

impl<'i, 'o> Bindings<'i, 'o> {
    /// Checks the images, parameters and output buffers of a run of `lowered`. `images`
    /// may hold more than the pipeline reads; each missing one, and each missing or wrongly
    /// typed parameter, is an `Err` that says how to bind it.
    ///
    /// ```
    /// use halogen::backend::Bindings;
    /// use halogen::prelude::*;
    /// use std::collections::BTreeMap;
    /// let x = Var::new("x");
    /// let f = Func::new("f");
    /// f.def(x, x);
    /// let lowered = halogen::lower::lower(&[f.func_ref().clone()], &Target::interp()).unwrap();
    /// let mut out = Buffer::<u8>::new(&[4]);
    /// let e = Bindings::check(&lowered.env, &BTreeMap::new(), &BTreeMap::new(), vec![out.raw_mut()]).unwrap_err();
    /// assert!(e.to_string().contains("output buffer for Func 'f' holds uint8 but 'f' produces int32"));
    /// ```
    pub fn check(
        env: &Environment,
        images: &BTreeMap<Name, RawBuffer<'i>>,
        params: &BTreeMap<Name, Expr>,
        outputs: Vec<RawBufferMut<'o>>,
    ) -> Result<Bindings<'i, 'o>> {
        let expected: usize = env.outputs.iter().map(|o| env.funcs[o].types.len()).sum();
        if outputs.len() != expected {
            return Err(Error::Argument(format!(
                "this pipeline writes {expected} output buffers ({}); {} were given",
                env.outputs
                    .iter()
                    .flat_map(|o| env.funcs[o].buffer_names())
                    .map(|b| format!("'{b}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
                outputs.len()
            )));
        }
        let mut bound: HashSet<String> = HashSet::new();
        let mut checked_outputs = Vec::with_capacity(outputs.len());
        let mut output_shapes = Vec::with_capacity(env.outputs.len());
        let mut given = outputs.into_iter();
        for name in &env.outputs {
            let f = &env.funcs[name];
            // The values of a tuple are stored with one shape: the first buffer's.
            let mut first: Option<Vec<BufferDim>> = None;
            for (i, ty) in f.types.iter().enumerate() {
                let out = given.next().expect("counted above");
                let what = if f.types.len() > 1 {
                    format!("output buffer {i} of Func '{name}'")
                } else {
                    format!("output buffer for Func '{name}'")
                };
                if *ty != out.ty {
                    let value =
                        if f.types.len() > 1 { format!("its value {i} is") } else { format!("'{name}' produces") };
                    return Err(Error::Buffer(format!("{what} holds {} but {value} {ty}", out.ty)));
                }
                if out.dims.len() != f.args.len() {
                    return Err(Error::Buffer(format!(
                        "{what} has {} dimensions but '{name}' has {}",
                        out.dims.len(),
                        f.args.len()
                    )));
                }
                check_coordinates(&what, &out.dims)?;
                match &first {
                    None => first = Some(out.dims.to_vec()),
                    Some(dims) => {
                        if let Some(d) = (0..dims.len()).find(|&d| dims[d] != out.dims[d]) {
                            let show =
                                |b: &BufferDim| format!("min {}, extent {}, stride {}", b.min, b.extent, b.stride);
                            return Err(Error::Buffer(format!(
                                "{what} differs from buffer 0 in dimension {d} ({} against {}): the buffers of a \
                                 tuple-valued output must have the same shape",
                                show(&out.dims[d]),
                                show(&dims[d])
                            )));
                        }
                    }
                }
                checked_outputs.push((buffer_name(name, i, f.types.len() > 1), out));
            }
            let dims = first.unwrap_or_default();
            bound.extend(shape_of(name, &dims).map(|(n, _)| n));
            output_shapes.push((name.clone(), dims));
        }
        let mut inputs = Vec::with_capacity(env.images.len());
        for (img, used) in &env.images {
            let Some(raw) = images.get(img) else {
                return Err(Error::Argument(format!(
                    "no buffer given for ImageParam '{img}'; bind it with args.image(&{img}, &buffer)"
                )));
            };
            if used.ty != raw.ty {
                return Err(Error::Buffer(format!(
                    "input buffer for ImageParam '{img}' holds {} but '{img}' has type {}",
                    raw.ty, used.ty
                )));
            }
            if used.dims != raw.dims.len() {
                return Err(Error::Buffer(format!(
                    "input buffer for ImageParam '{img}' has {} dimensions but '{img}' is used with {}",
                    raw.dims.len(),
                    used.dims
                )));
            }
            check_coordinates(&format!("input buffer for ImageParam '{img}'"), &raw.dims)?;
            bound.extend(shape_of(img, &raw.dims).map(|(n, _)| n));
            inputs.push((img.clone(), raw.clone()));
        }
        let mut checked_params = BTreeMap::new();
        for (p, ty) in &env.params {
            if bound.contains(&**p) {
                continue;
            }
            match params.get(p) {
                Some(v) if v.ty() == *ty => {
                    checked_params.insert(p.clone(), v.clone());
                }
                Some(v) => {
                    return Err(Error::Argument(format!(
                        "Param '{p}' has type {ty} but was given a value of type {}",
                        v.ty()
                    )))
                }
                None => {
                    let image = ["min", "extent", "stride"]
                        .iter()
                        .find_map(|w| p.split_once(&format!(".{w}.")).map(|(img, _)| img.to_string()));
                    return Err(match image {
                        Some(img) => Error::Argument(format!(
                            "no buffer given for ImageParam '{img}' (the pipeline uses its shape '{p}')"
                        )),
                        None => Error::Argument(format!(
                            "no value given for Param '{p}'; bind it with args.param(&{p}, value)"
                        )),
                    });
                }
            }
        }
        Ok(Bindings { inputs, outputs: checked_outputs, output_shapes, params: checked_params, communicator: None })
    }

    /// The shape scalars (`name.min.d`, `name.extent.d`, `name.stride.d`) of every input
    /// and output, as the lowered code names them.
    pub fn shape_scalars(&self) -> Vec<(String, Expr)> {
        let inputs = self.inputs.iter().flat_map(|(n, b)| shape_of(n, &b.dims));
        let outputs = self.output_shapes.iter().flat_map(|(n, dims)| shape_of(n, dims));
        // The values of a tuple also bind their own shapes, which the code checks against
        // the shared one.
        let values = self
            .outputs
            .iter()
            .filter(|(n, _)| !self.output_shapes.iter().any(|(f, _)| f == n))
            .flat_map(|(n, b)| shape_of(n, &b.dims));
        inputs.chain(outputs).chain(values).collect()
    }
}
