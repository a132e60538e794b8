//! The sizes the auto-scheduler plans for: the outputs' and inputs' estimates and the
//! estimated values of scalar parameters that decide regions. Estimates guide; they
//! never bound (the schedule is correct at any size).

use super::footprint::NumBox;
use super::graph::Graph;
use crate::analysis::{Interval, Scope};
use crate::error::{Error, Result};
use crate::ir::{Expr, Name};
use crate::lang::param::{lookup_param, ImageParam};
use std::collections::BTreeMap;

/// The estimates, as the scope numeric bounds are evaluated in.
#[derive(Clone, Debug)]
pub(crate) struct Estimates {
    /// Image shapes, buffer shapes of outputs and parameter values.
    pub scope: Scope,
    /// Region of each output node.
    pub outputs: BTreeMap<usize, NumBox>,
    /// Region of each image.
    pub images: BTreeMap<Name, NumBox>,
}

fn to_box(e: &[(i32, i32)]) -> NumBox {
    e.iter().map(|&(m, x)| (m as i64, m as i64 + (x as i64).max(1) - 1)).collect()
}

fn point(v: i64) -> Interval {
    Interval::point(Expr::i32(v))
}

fn shape_symbols(scope: &mut Scope, name: &str, b: &NumBox) {
    let mut stride = 1i64;
    for (d, (lo, hi)) in b.iter().enumerate() {
        let extent = hi - lo + 1;
        scope.insert(format!("{name}.min.{d}").into(), point(*lo));
        scope.insert(format!("{name}.extent.{d}").into(), point(extent));
        scope.insert(format!("{name}.stride.{d}").into(), point(stride));
        stride = stride.saturating_mul(extent);
    }
}

fn is_shape_symbol(p: &str, images: &BTreeMap<Name, (usize, crate::ir::Type)>, outputs: &[Name]) -> bool {
    ["min", "extent", "stride"].iter().any(|w| {
        p.split_once(&format!(".{w}.")).is_some_and(|(base, d)| {
            d.parse::<usize>().is_ok() && (images.contains_key(base) || outputs.iter().any(|o| **o == *base))
        })
    })
}

/// Gathers the estimates; names every output, image and parameter that lacks one.
pub(crate) fn gather(g: &Graph) -> Result<Estimates> {
    let mut missing: Vec<String> = Vec::new();
    let mut scope = Scope::new();
    let mut outputs = BTreeMap::new();
    let output_names: Vec<Name> = g.nodes.iter().filter(|n| n.is_output).map(|n| n.name.clone()).collect();
    for (i, n) in g.nodes.iter().enumerate().filter(|(_, n)| n.is_output) {
        if n.estimates.len() != n.dims() {
            let what = if n.estimates.is_empty() {
                "has none".to_string()
            } else {
                format!("has {} (min, extent) pairs but {} dimensions", n.estimates.len(), n.dims())
            };
            missing.push(format!(
                "output Func '{}' ({what}; call {}.set_estimates(&[(min, extent); {}]))",
                n.name,
                n.name,
                n.dims()
            ));
            continue;
        }
        let b = to_box(&n.estimates);
        shape_symbols(&mut scope, &n.name, &b);
        outputs.insert(i, b);
    }
    let mut images = BTreeMap::new();
    for (name, (dims, _)) in &g.images {
        let Some(param) = ImageParam::lookup(name) else {
            // Inputs are found by name among the live ImageParams.
            missing.push(format!(
                "ImageParam '{name}' (no ImageParam of this name is alive; keep its handle while scheduling)"
            ));
            continue;
        };
        let est = param.estimates();
        if est.len() != *dims {
            let what = if est.is_empty() {
                "has none".to_string()
            } else {
                format!("has {} (min, extent) pairs but is used with {dims} dimensions", est.len())
            };
            missing.push(format!("ImageParam '{name}' ({what}; call {name}.set_estimates(&[(min, extent); {dims}]))"));
            continue;
        }
        let b = to_box(&est);
        shape_symbols(&mut scope, name, &b);
        images.insert(name.clone(), b);
    }
    for p in &g.shape_params {
        if is_shape_symbol(p, &g.images, &output_names) {
            continue;
        }
        match lookup_param(p).and_then(|i| i.estimate) {
            Some(v) => {
                scope.insert(p.clone(), Interval::point(v));
            }
            None => missing.push(format!("Param '{p}' (it decides a region; call {p}.set_estimate(value))")),
        }
    }
    if !missing.is_empty() {
        return Err(Error::Schedule(format!(
            "auto_schedule needs estimates of the outputs' sizes, the input images' sizes and the parameters that decide regions; missing: {}",
            missing.join(", ")
        )));
    }
    Ok(Estimates { scope, outputs, images })
}
