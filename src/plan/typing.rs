//! Which type each text column takes: the type of the typed column it
//! pairs with (by the alignment options), the type a `--cast` names, or with
//! `--infer-types` one inferred from both sides' samples.

use arrow::datatypes::DataType;

use crate::config::AlignOptions;
use crate::error::{ReconError, Result};
use crate::input::values::{infer, text_type_for};
use crate::input::Table;

/// Gives each untyped column of one side the type of its partner on the
/// other side, when that partner is typed. Pairing follows the alignment
/// options (names, case, `--map`, positions), excluded columns included.
/// An untyped column named by `--cast` is parsed straight into that type;
/// with `infer`, pairs that are text on both sides get an inferred type.
pub fn resolve(
    src: &mut Table,
    tgt: &mut Table,
    opts: &AlignOptions,
    infer_types: bool,
) -> Result<()> {
    if !src.untyped.iter().any(|&u| u) && !tgt.untyped.iter().any(|&u| u) {
        return Ok(());
    }
    let samples = if infer_types {
        [
            crate::input::sample(src, 1 << 20)?,
            crate::input::sample(tgt, 1 << 20)?,
        ]
    } else {
        [Vec::new(), Vec::new()]
    };
    // Pairs left out of the comparison (--exclude, outside --columns) stay
    // text: they are only shown in evidence rows, never parsed.
    let mut pairing = opts.clone();
    pairing.ignore_extra_columns = true;
    pairing.casts.clear();
    pairing.rules.clear();
    let plan = super::align::plan(&src.schema, &tgt.schema, &pairing);
    let cast_for = |name: &str| {
        opts.casts
            .iter()
            .find(|(c, _)| {
                if opts.ignore_case_names {
                    c.eq_ignore_ascii_case(name)
                } else {
                    c == name
                }
            })
            .map(|(_, t)| t.clone())
    };
    let mut types: [Vec<(usize, DataType)>; 2] = [Vec::new(), Vec::new()];
    // --cast on a text column: parse into that type directly (exact parsers, not arrow casts).
    for (side, t) in [&*src, &*tgt].into_iter().enumerate() {
        for (i, f) in t.schema.fields().iter().enumerate() {
            if t.untyped[i] {
                if let Some(ty) = cast_for(f.name()) {
                    let ty = text_type_for(&ty)
                        .map_err(|m| ReconError::Usage(format!("--cast {}: {m}", f.name())))?;
                    types[side].push((i, ty));
                }
            }
        }
    }
    let cast_already = |side: usize, i: usize, types: &[Vec<(usize, DataType)>; 2]| {
        types[side].iter().any(|(j, _)| *j == i)
    };
    for c in &plan.columns {
        let (si, ti) = (c.source_index, c.target_index);
        let (s_text, t_text) = (
            src.untyped[si] && !cast_already(0, si, &types),
            tgt.untyped[ti] && !cast_already(1, ti, &types),
        );
        let (side, i, typed) = match (s_text, t_text) {
            (true, false) => (0, si, tgt.schema.field(ti).data_type().clone()),
            (false, true) => (1, ti, src.schema.field(si).data_type().clone()),
            (true, true) if infer_types => {
                let mut vals: Vec<&str> = Vec::new();
                for (side, i) in [(0, si), (1, ti)] {
                    if let Some(col) = samples[side].get(i) {
                        vals.extend(col.iter().flatten().map(|s| s.as_str()));
                    }
                }
                let ty = infer(&vals);
                types[0].push((si, ty.clone()));
                types[1].push((ti, ty));
                continue;
            }
            _ => continue,
        };
        let table = if side == 0 { &*src } else { &*tgt };
        let ty = text_type_for(&typed).map_err(|m| {
            ReconError::input(
                &table.path,
                format!(
                    "column '{}' is text here and {typed} on the other side: {m}",
                    table.schema.field(i).name(),
                ),
            )
        })?;
        types[side].push((i, ty));
    }
    let [s_types, t_types] = types;
    src.set_types(&s_types)?;
    tgt.set_types(&t_types)?;
    Ok(())
}
