//! Which type each text column takes: the type of the typed column it
//! pairs with (by the alignment options), the type a `--cast` names, or with
//! `--infer-types` one inferred from both sides' samples.

use arrow::datatypes::{DataType, TimeUnit};

use super::align::eq_name;
use crate::config::{AlignOptions, Normalize};
use crate::error::hint::option;
use crate::error::{ReconError, Result};
use crate::input::format::text::values::{infer, text_type_for, TextColumn};
use crate::input::Table;

/// Gives each untyped column of one side the type of its partner on the
/// other side, when that partner is typed. Pairing follows the alignment
/// options (names, case, `--map`, positions), excluded columns included.
/// An untyped column named by `--cast` is parsed straight into that type;
/// with `infer`, pairs that are text on both sides get an inferred type.
pub(crate) fn resolve(
    src: &mut Table,
    tgt: &mut Table,
    opts: &AlignOptions,
    infer_types: bool,
) -> Result<()> {
    if !src.untyped.iter().any(|&u| u) && !tgt.untyped.iter().any(|&u| u) {
        return check_patterns_used(src, tgt, opts);
    }
    let samples = if infer_types {
        [src.sample(1 << 20)?, tgt.sample(1 << 20)?]
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
            .find(|(c, _)| eq_name(c, name, opts.ignore_case_names))
            .map(|(_, t)| t.clone())
    };
    let mut types: [Vec<(usize, DataType)>; 2] = [Vec::new(), Vec::new()];
    // --cast on a text column: parse into that type directly (exact parsers, not arrow casts).
    for (side, t) in [&*src, &*tgt].into_iter().enumerate() {
        for (i, f) in t.schema.fields().iter().enumerate() {
            if t.untyped[i] {
                if let Some(ty) = cast_for(f.name()) {
                    let ty = text_type_for(&ty)
                        .map_err(|m| ReconError::Usage(format!("`--cast {}`: {m}", f.name())))?;
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
    // A text column a date or timestamp pattern names, with no typed
    // partner to take a type from, is read as a date or timestamp: the
    // pattern says so.
    for (side, t) in [&*src, &*tgt].into_iter().enumerate() {
        for (i, f) in t.schema.fields().iter().enumerate() {
            if !t.untyped[i] || cast_already(side, i, &types) {
                continue;
            }
            if named(&t.text.date_formats, f.name(), opts).is_some() {
                types[side].push((i, DataType::Date32));
            } else if named(&t.text.timestamp_formats, f.name(), opts).is_some() {
                types[side].push((i, DataType::Timestamp(TimeUnit::Microsecond, None)));
            }
        }
    }
    let [s_types, t_types] = types;
    src.set_types(&s_types)?;
    tgt.set_types(&t_types)?;
    for t in [&mut *src, &mut *tgt] {
        let specs = text_columns(t, opts);
        t.set_text_columns(specs)?;
    }
    if opts.by_position {
        let pairs: Vec<(usize, usize)> = plan
            .columns
            .iter()
            .map(|c| (c.source_index, c.target_index))
            .collect();
        sure_of_header(src, tgt, &pairs)?;
        let flipped: Vec<(usize, usize)> = pairs.iter().map(|&(s, t)| (t, s)).collect();
        sure_of_header(tgt, src, &flipped)?;
    }
    check_patterns_used(src, tgt, opts)
}

/// Pairing by position never looks at names, so a wrongly sniffed header
/// would silently drop a row (or add one) on that side. When sniffing found
/// no evidence, the other side's types decide: a first line whose values all
/// parse as the typed columns they pair with is data, one that does not is
/// a header. With nothing to decide by, the user must say.
fn sure_of_header(t: &Table, other: &Table, pairs: &[(usize, usize)]) -> Result<()> {
    if !(t.text.sniff.header && t.text.header_unsure) {
        return Ok(());
    }
    let (mut typed, mut parses) = (0, 0);
    for &(i, j) in pairs.iter().filter(|(i, _)| *i < t.file_columns) {
        let (f, partner) = (t.schema.field(i), other.schema.field(j));
        if other.untyped[j]
            || matches!(
                partner.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            )
        {
            continue;
        }
        typed += 1;
        let spec = &t.text_columns[i];
        let mut bad = Vec::new();
        crate::input::format::text::values::parse_lenient_as(
            f.data_type(),
            &[spec.prepare(Some(f.name()))],
            &mut bad,
            1,
            spec,
        );
        parses += usize::from(bad.is_empty());
    }
    if typed > 0 && parses < typed {
        return Ok(());
    }
    let why = if typed > 0 {
        "its first line reads as a row of the other table's types, and sniffing cannot tell if it is a header; pairing by position would drop it unseen: pass `--no-header` if it is data, or `--header`"
    } else {
        "sniffing cannot tell whether its first line is a header (every column is text), and pairing by position would drop or add a row unseen: pass `--header` or `--no-header`"
    };
    // A first line that may be a title: the way out may be --skip-rows instead.
    let preamble = t
        .text
        .preamble_hint
        .as_ref()
        .map_or_else(String::new, |(_, h)| format!("; or {h}"));
    Err(ReconError::input(&t.path, format!("{why}{preamble}")))
}

/// The pattern `list` gives column `name`: its own, else the `*` one.
fn named<'a>(list: &'a [(String, String)], name: &str, opts: &AlignOptions) -> Option<&'a str> {
    list.iter()
        .find(|(c, _)| eq_name(c, name, opts.ignore_case_names))
        .or_else(|| list.iter().find(|(c, _)| c == "*"))
        .map(|(_, p)| p.as_str())
}

/// How each text column of `t` is read, from its final type: rules on its
/// raw text when it is parsed into a non-string type (a string column
/// takes them after reading, like the other side's), its date or timestamp
/// pattern, and the zone abbreviations.
fn text_columns(t: &Table, opts: &AlignOptions) -> Vec<(usize, TextColumn)> {
    let mut out = Vec::new();
    for (i, f) in t.schema.fields().iter().enumerate() {
        if !t.untyped[i] {
            continue;
        }
        let ty = f.data_type();
        let rule = |want: &Normalize| {
            !matches!(ty, DataType::Utf8)
                && opts.rules.iter().any(|r| {
                    &r.rule == want
                        && (r.column == "*" || eq_name(&r.column, f.name(), opts.ignore_case_names))
                })
        };
        let pattern = match ty {
            DataType::Date32 | DataType::Date64 => named(&t.text.date_formats, f.name(), opts),
            DataType::Timestamp(..) => named(&t.text.timestamp_formats, f.name(), opts),
            _ => None,
        };
        let spec = TextColumn {
            trim: rule(&Normalize::Trim),
            empty_as_null: rule(&Normalize::EmptyAsNull),
            pattern: pattern.map(str::to_string),
            zones: if matches!(ty, DataType::Timestamp(..)) {
                opts.zone_names.clone()
            } else {
                Vec::new()
            },
        };
        if !spec.is_plain() {
            out.push((i, spec));
        }
    }
    out
}

/// A pattern that names a column must be used by it: a date pattern on a
/// column read as a number would otherwise be silently ignored.
fn check_patterns_used(src: &Table, tgt: &Table, opts: &AlignOptions) -> Result<()> {
    let is_date = |t: &DataType| matches!(t, DataType::Date32 | DataType::Date64);
    let is_timestamp = |t: &DataType| matches!(t, DataType::Timestamp(..));
    type Kind<'a> = (
        &'a str,
        &'a [(String, String)],
        &'a str,
        &'a dyn Fn(&DataType) -> bool,
    );
    let kinds: [Kind; 2] = [
        ("date_format", &src.text.date_formats, "date", &is_date),
        (
            "timestamp_format",
            &src.text.timestamp_formats,
            "timestamp",
            &is_timestamp,
        ),
    ];
    for (flag, list, wants, is_kind) in kinds {
        for (column, _) in list.iter().filter(|(c, _)| c != "*") {
            let mut found = None;
            for t in [src, tgt] {
                for (i, f) in t.schema.fields().iter().enumerate() {
                    if eq_name(f.name(), column, opts.ignore_case_names) {
                        let used = t.untyped[i] && is_kind(f.data_type());
                        found = Some(found.unwrap_or(false) || used);
                        if !used && t.untyped[i] {
                            return Err(ReconError::Usage(format!(
                                "{}: column '{column}' of {} is read as {}, not as a {wants}",
                                option(flag, format!("{column}=...")),
                                t.path.display(),
                                f.data_type()
                            )));
                        }
                    }
                }
            }
            match found {
                None => {
                    return Err(ReconError::Usage(format!(
                        "{}: no column named '{column}'",
                        option(flag, format!("{column}=..."))
                    )))
                }
                Some(false) => {
                    return Err(ReconError::Usage(format!(
                        "{}: column '{column}' is not text on either side, so it has no pattern to read",
                        option(flag, format!("{column}=..."))
                    )))
                }
                Some(true) => {}
            }
        }
    }
    Ok(())
}
