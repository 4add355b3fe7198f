//! Column alignment and comparison rules: which source column is compared
//! with which target column, how their types meet, and which normalization
//! rules apply. Reads schemas only; the result is a [`ComparePlan`].
//!
//! Alignment is by name unless `by_position` is set. `--map SRC=TGT` pairs
//! renamed columns first; `--exclude` drops columns from the comparison (they
//! stay in the evidence rows); `--columns` compares only a subset; a column on
//! one side only is a problem unless excluded or `ignore_extra` is set.

use std::collections::HashSet;

use arrow::datatypes::{DataType, Field, Fields, Schema, TimeUnit};

use super::classes::ValueClass;
use crate::config::{AlignOptions, Normalize};
use crate::digest::check_supported;
use crate::error::hint::as_flags;
use crate::side::Side;

/// One side's conversion of a column before hashing.
#[derive(Debug, Clone, PartialEq)]
pub enum Convert {
    /// Parse or cast into this type; a value that does not convert is an error.
    Cast(DataType),
    /// Interpret naive timestamps as local time in this zone.
    AssumeTz(String),
}

/// One compared column pair.
#[derive(Debug, Clone)]
pub struct ColumnPair {
    pub source_name: String,
    pub target_name: String,
    pub source_index: usize,
    pub target_index: usize,
    pub source_field: Field,
    pub target_field: Field,
    /// How the pair was formed: "name", "name (case-insensitive)", "--map", "position".
    pub pairing: String,
    /// How values are compared, e.g. "decimal by value".
    pub rule: String,
    pub source_convert: Option<Convert>,
    pub target_convert: Option<Convert>,
    pub normalize: Vec<Normalize>,
}

impl ColumnPair {
    /// The class values are compared in, after conversions.
    pub fn class(&self) -> ValueClass {
        let side = |conv: &Option<Convert>, f: &Field| match conv {
            Some(Convert::Cast(t)) => ValueClass::of(t),
            _ => ValueClass::of(f.data_type()),
        };
        // An all-NULL (Null-typed) side says nothing; the other side decides.
        match side(&self.source_convert, &self.source_field) {
            ValueClass::Null => side(&self.target_convert, &self.target_field),
            class => class,
        }
    }
}

/// A column present in the schema but not compared, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub side: Side,
    pub index: usize,
    pub field: Field,
    pub why: String,
}

/// The outcome of preflight: what will be compared, and every problem found.
#[derive(Debug, Clone)]
pub struct ComparePlan {
    pub columns: Vec<ColumnPair>,
    pub skipped: Vec<Skipped>,
    pub problems: Vec<String>,
}

impl ComparePlan {
    pub fn is_compatible(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Whether a rule makes sense for a column of this class.
fn applies_to(rule: &Normalize, class: &ValueClass) -> bool {
    match rule {
        Normalize::Round(_) => matches!(class, ValueClass::Float | ValueClass::Decimal),
        Normalize::TimestampPrecision(_) => {
            matches!(class, ValueClass::Timestamp | ValueClass::TimestampZoned)
        }
        Normalize::Trim | Normalize::CaseInsensitive | Normalize::EmptyAsNull => {
            matches!(class, ValueClass::String)
        }
    }
}

/// Whether `rule` was applied to this text column's raw text before it was
/// parsed into its type (`--trim` on a CSV column read as an integer).
fn applied_to_text(field: &Field, rule: &Normalize) -> bool {
    let name = match rule {
        Normalize::Trim => "trim",
        Normalize::EmptyAsNull => "empty_as_null",
        _ => return false,
    };
    field
        .metadata()
        .get(crate::input::TEXT_RULES)
        .is_some_and(|v| v.split(',').any(|r| r == name))
}

fn class_rule(class: &ValueClass) -> &'static str {
    match class {
        ValueClass::Null => "all NULL",
        ValueClass::Bool => "boolean",
        ValueClass::Integer => "integer by value",
        ValueClass::Float => "float by float64 value",
        ValueClass::Decimal => "decimal by value",
        ValueClass::String => "string, exact",
        ValueClass::Binary => "binary, exact",
        ValueClass::Date => "date",
        ValueClass::Timestamp => "timestamp, wall clock",
        ValueClass::TimestampZoned => "timestamp as UTC instant",
        ValueClass::Time => "time of day",
        ValueClass::Duration => "duration",
        ValueClass::Interval => "interval",
        ValueClass::List(_) => "list, in order",
        ValueClass::Struct(_) => "struct, field by field by name",
        ValueClass::Map(..) => "map, as a set of entries",
    }
}

/// Whether two column names are the same under `--ignore-case-names`.
pub(super) fn eq_name(a: &str, b: &str, ignore_case: bool) -> bool {
    if ignore_case {
        a.to_lowercase() == b.to_lowercase()
    } else {
        a == b
    }
}

fn is_text(class: &ValueClass) -> bool {
    matches!(class, ValueClass::String)
}

/// Builds the comparison plan for two schemas. Problems are collected, not
/// returned early, so one screen shows them all.
pub(crate) fn plan(source: &Schema, target: &Schema, opts: &AlignOptions) -> ComparePlan {
    let (sf, tf) = (source.fields(), target.fields());
    let mut problems = check_names(source, target, opts);
    let mut skipped = Vec::new();
    let (pairs, src_used, tgt_used) = pair_columns(sf, tf, opts, &mut problems);
    let kept = subset(pairs, sf, tf, opts, &mut problems, &mut skipped);
    one_sided(
        sf,
        tf,
        [&src_used, &tgt_used],
        opts,
        &mut problems,
        &mut skipped,
    );
    let columns = type_pairs(kept, sf, tf, opts, &mut problems);
    ComparePlan {
        columns,
        skipped,
        problems,
    }
}

/// Problems with the names and zones the options give, before any pairing:
/// renamed or duplicate headers, unknown time zones.
fn check_names(source: &Schema, target: &Schema, opts: &AlignOptions) -> Vec<String> {
    let mut problems = Vec::new();
    for (schema, side) in [(source, "source"), (target, "target")] {
        if !opts.by_position {
            for f in schema.fields() {
                if let Some(why) = f.metadata().get(crate::input::RENAMED_HEADER) {
                    problems.push(format!(
                        "{side} column '{}' has a {why}: columns cannot be paired by name; pass `--by-position`",
                        f.name()
                    ));
                }
            }
        }
        let mut seen = HashSet::new();
        for f in schema.fields() {
            let key = if opts.ignore_case_names {
                f.name().to_lowercase()
            } else {
                f.name().clone()
            };
            if !seen.insert(key) {
                problems.push(format!("{side} has a duplicate column name: {}", f.name()));
            }
        }
    }

    let valid_tz = |tz: &str| tz.parse::<arrow::array::timezone::Tz>().is_ok();
    if let Some(tz) = opts.assume_tz.as_deref().filter(|tz| !valid_tz(tz)) {
        problems.push(format!(
            "`--assume-tz {tz}`: unknown time zone (use an IANA name such as Europe/Paris, or an offset such as +02:00)"
        ));
    }
    for (c, ty) in &opts.casts {
        if let DataType::Timestamp(_, Some(tz)) = ty {
            if !valid_tz(tz) {
                problems.push(format!("`--cast {c}`: unknown time zone '{tz}'"));
            }
        }
    }
    problems
}

/// Whether `list` names the column `s` (source) or `t` (target).
fn named(list: &[String], s: &str, t: &str, opts: &AlignOptions) -> bool {
    list.iter()
        .any(|n| eq_name(n, s, opts.ignore_case_names) || eq_name(n, t, opts.ignore_case_names))
}

/// A pair of columns: source index, target index, and how they were paired.
type Paired = (usize, usize, String);

/// Pairs columns by position, or by `--map` and then by name; returns the
/// pairs and, per side, which columns they use.
fn pair_columns(
    sf: &Fields,
    tf: &Fields,
    opts: &AlignOptions,
    problems: &mut Vec<String>,
) -> (Vec<Paired>, Vec<bool>, Vec<bool>) {
    let mut pairs: Vec<Paired> = Vec::new();
    let mut src_used = vec![false; sf.len()];
    let mut tgt_used = vec![false; tf.len()];
    if opts.by_position {
        for (si, ti) in position_pairs(sf, tf, opts, problems) {
            pairs.push((si, ti, "position".into()));
            src_used[si] = true;
            tgt_used[ti] = true;
        }
    } else {
        for (s, t) in &opts.maps {
            let si = sf
                .iter()
                .position(|f| eq_name(f.name(), s, opts.ignore_case_names));
            let ti = tf
                .iter()
                .position(|f| eq_name(f.name(), t, opts.ignore_case_names));
            match (si, ti) {
                (Some(si), Some(ti)) if !src_used[si] && !tgt_used[ti] => {
                    pairs.push((si, ti, "--map".into()));
                    src_used[si] = true;
                    tgt_used[ti] = true;
                }
                (Some(_), Some(_)) => {
                    problems.push(format!("`--map {s}={t}`: a column is mapped twice"))
                }
                (None, _) => problems.push(format!("`--map {s}={t}`: source has no column '{s}'")),
                (_, None) => problems.push(format!("`--map {s}={t}`: target has no column '{t}'")),
            }
        }
        for (si, f) in sf.iter().enumerate() {
            if src_used[si] {
                continue;
            }
            let exact = tf
                .iter()
                .enumerate()
                .position(|(ti, g)| !tgt_used[ti] && g.name() == f.name());
            let found = exact.map(|ti| (ti, "name")).or_else(|| {
                if !opts.ignore_case_names {
                    return None;
                }
                tf.iter()
                    .enumerate()
                    .position(|(ti, g)| !tgt_used[ti] && eq_name(g.name(), f.name(), true))
                    .map(|ti| (ti, "name (case-insensitive)"))
            });
            if let Some((ti, how)) = found {
                pairs.push((si, ti, how.into()));
                src_used[si] = true;
                tgt_used[ti] = true;
            }
        }
    }
    (pairs, src_used, tgt_used)
}

/// Drops the pairs `--exclude` names or `--columns` leaves out (recording
/// them as skipped), and checks that each name given names a column.
fn subset(
    pairs: Vec<Paired>,
    sf: &Fields,
    tf: &Fields,
    opts: &AlignOptions,
    problems: &mut Vec<String>,
    skipped: &mut Vec<Skipped>,
) -> Vec<Paired> {
    let lists = [("`--exclude`", &opts.exclude[..])]
        .into_iter()
        .chain(opts.columns.as_deref().map(|c| ("`--columns`", c)));
    for (flag, list) in lists {
        for n in list {
            let known = sf
                .iter()
                .chain(tf.iter())
                .any(|f| eq_name(f.name(), n, opts.ignore_case_names));
            if !known {
                problems.push(format!("{flag}: no column named '{n}' in source or target"));
            }
        }
    }
    let mut kept = Vec::new();
    for (si, ti, how) in pairs {
        let (s, t) = (sf[si].name(), tf[ti].name());
        let why = if named(&opts.exclude, s, t, opts) {
            Some("excluded (--exclude)")
        } else if opts.columns.as_ref().is_some_and(|c| !named(c, s, t, opts)) {
            Some("not in --columns")
        } else {
            None
        };
        match why {
            Some(why) => {
                skipped.push(Skipped {
                    side: Side::Source,
                    index: si,
                    field: sf[si].as_ref().clone(),
                    why: why.into(),
                });
                skipped.push(Skipped {
                    side: Side::Target,
                    index: ti,
                    field: tf[ti].as_ref().clone(),
                    why: why.into(),
                });
            }
            None => kept.push((si, ti, how)),
        }
    }
    kept
}

/// Columns on one side only: skipped, and a problem unless the options
/// allow them. When no column pairs at all, one short message beats a hint
/// per column: it is probably the wrong table, the wrong delimiter, or a
/// header-less file.
fn one_sided(
    sf: &Fields,
    tf: &Fields,
    [src_used, tgt_used]: [&[bool]; 2],
    opts: &AlignOptions,
    problems: &mut Vec<String>,
    skipped: &mut Vec<Skipped>,
) {
    let nothing_paired = !opts.by_position
        && !src_used.iter().any(|&u| u)
        && !sf.is_empty()
        && !tf.is_empty()
        && !opts.ignore_extra_columns
        // Names that differ only in case get the per-column hint instead.
        && !sf
            .iter()
            .any(|a| tf.iter().any(|b| eq_name(a.name(), b.name(), true)));
    if nothing_paired {
        let first = |fields: &arrow::datatypes::Fields| {
            let names: Vec<String> = fields
                .iter()
                .take(4)
                .map(|f| format!("'{}'", f.name()))
                .collect();
            let more = if fields.len() > 4 { ", …" } else { "" };
            format!("{}{more}", names.join(", "))
        };
        problems.push(format!(
            "these tables share no column names (source: {}; target: {}): is this the right table? Pair the columns by position with `--by-position`, or by name with `--map`{}{}",
            first(sf),
            first(tf),
            delimiter_hint(sf, tf),
            header_hint(sf, tf)
        ));
    }
    let sides = [
        (sf, src_used, Side::Source, tf, tgt_used),
        (tf, tgt_used, Side::Target, sf, src_used),
    ];
    for (fields, used, side, other, other_used) in sides {
        for (i, f) in fields.iter().enumerate() {
            if used[i] {
                continue;
            }
            let excluded = named(&opts.exclude, f.name(), f.name(), opts);
            let outside_subset = opts
                .columns
                .as_ref()
                .is_some_and(|c| !named(c, f.name(), f.name(), opts));
            let why = if excluded {
                "excluded (--exclude)"
            } else if outside_subset {
                "not in --columns"
            } else if opts.by_position && opts.columns.is_some() {
                // The column counts differ: position_pairs said so, with the names.
                "in --columns, without a partner by position"
            } else if opts.ignore_extra_columns {
                "only in this side (--ignore-extra-columns)"
            } else if nothing_paired {
                "only in this side"
            } else {
                // A twin differing only in case is the usual cause: say so.
                let twin = other
                    .iter()
                    .enumerate()
                    .find(|(j, g)| !other_used[*j] && eq_name(g.name(), f.name(), true))
                    .map(|(_, g)| g.name().clone());
                problems.push(match twin {
                    Some(t) => format!(
                        "column '{}' is only in the {side}, but the other side has '{t}': pass `--ignore-case-names`, or pair them with `--map`",
                        f.name()
                    ),
                    None => format!(
                        "column '{}' is only in the {side}; exclude it with `--exclude {}`, pair it with `--map`, or pass `--ignore-extra-columns`{}",
                        f.name(),
                        f.name(),
                        delimiter_hint(fields, other)
                    ),
                });
                "only in this side"
            };
            skipped.push(Skipped {
                side,
                index: i,
                field: f.as_ref().clone(),
                why: why.into(),
            });
        }
    }
}

/// Types, conversions and rules per pair, then checks that every rule and
/// cast names a compared column.
fn type_pairs(
    kept: Vec<Paired>,
    sf: &Fields,
    tf: &Fields,
    opts: &AlignOptions,
    problems: &mut Vec<String>,
) -> Vec<ColumnPair> {
    let mut columns = Vec::new();
    for (si, ti, pairing) in kept {
        let (s, t) = (sf[si].as_ref(), tf[ti].as_ref());
        let mut pair = ColumnPair {
            source_name: s.name().clone(),
            target_name: t.name().clone(),
            source_index: si,
            target_index: ti,
            source_field: s.clone(),
            target_field: t.clone(),
            pairing,
            rule: String::new(),
            source_convert: None,
            target_convert: None,
            normalize: Vec::new(),
        };
        let before = problems.len();
        type_pair(&mut pair, opts, problems);
        if problems.len() > before {
            pair.rule = "INCOMPATIBLE (see below)".into();
        }
        for r in &opts.rules {
            let explicit = r.column != "*";
            if explicit
                && !eq_name(&r.column, s.name(), opts.ignore_case_names)
                && !eq_name(&r.column, t.name(), opts.ignore_case_names)
            {
                continue;
            }
            if applies_to(&r.rule, &pair.class()) {
                pair.normalize.push(r.rule.clone());
            } else if applied_to_text(s, &r.rule) || applied_to_text(t, &r.rule) {
                // Done to the raw text before it was parsed (see plan::typing).
            } else if explicit {
                problems.push(format!(
                    "rule '{}' does not apply to column '{}' ({})",
                    r.rule.describe(),
                    s.name(),
                    s.data_type()
                ));
            }
        }
        columns.push(pair);
    }
    for r in &opts.rules {
        if r.column != "*"
            && !sf
                .iter()
                .chain(tf.iter())
                .any(|f| eq_name(f.name(), &r.column, opts.ignore_case_names))
        {
            problems.push(format!(
                "rule '{}' names no column: '{}'",
                r.rule.describe(),
                r.column
            ));
        }
    }
    for (c, _) in opts.casts.iter().filter(|(c, _)| c != "*") {
        if !columns.iter().any(|p| {
            eq_name(&p.source_name, c, opts.ignore_case_names)
                || eq_name(&p.target_name, c, opts.ignore_case_names)
        }) {
            problems.push(format!("`--cast {c}=...`: no compared column named '{c}'"));
        }
    }
    if columns.is_empty() && problems.is_empty() {
        problems.push("no columns left to compare".into());
    }
    columns
}

/// The (source, target) column pairs of `--by-position`.
///
/// Excluded columns leave first, so "exclude the 17th column, pair the rest
/// by position" works. With `--columns`, each side then keeps the columns it
/// has of those names, in its own order, and the kept columns pair by that
/// order: `--columns id,amount,ID,AMT` names two columns of each side. A
/// side that has none of the names follows the other by position (`--columns
/// l_orderkey` against a header-less `column_1…` side keeps `column_1`),
/// which needs the same column count on both sides after `--exclude`.
fn position_pairs(
    sf: &arrow::datatypes::Fields,
    tf: &arrow::datatypes::Fields,
    opts: &AlignOptions,
    problems: &mut Vec<String>,
) -> Vec<(usize, usize)> {
    let listed = |list: &[String], name: &str| {
        list.iter()
            .any(|n| eq_name(n, name, opts.ignore_case_names))
    };
    let kept = |fields: &arrow::datatypes::Fields| -> Vec<usize> {
        (0..fields.len())
            .filter(|&i| !listed(&opts.exclude, fields[i].name()))
            .collect()
    };
    let (ks, kt) = (kept(sf), kept(tf));
    let after = if opts.exclude.is_empty() {
        ""
    } else {
        " after `--exclude`"
    };
    let counts = format!("source has {}, target has {}", ks.len(), kt.len());
    let Some(columns) = &opts.columns else {
        if ks.len() != kt.len() {
            problems.push(format!(
                "`--by-position` needs the same column count{after}: {counts}"
            ));
        }
        return ks.into_iter().zip(kt).collect();
    };
    // Positions (among the kept columns) of the named ones, per side.
    let named = |fields: &arrow::datatypes::Fields, kept: &[usize]| -> Vec<usize> {
        (0..kept.len())
            .filter(|&p| listed(columns, fields[kept[p]].name()))
            .collect()
    };
    let (mut ps, mut pt) = (named(sf, &ks), named(tf, &kt));
    // A side without any of the names follows the other by position.
    let lead = match (ps.is_empty(), pt.is_empty()) {
        (false, true) => Some(("source", "target")),
        (true, false) => Some(("target", "source")),
        _ => None,
    };
    if let Some((lead, other)) = lead {
        if ks.len() != kt.len() {
            problems.push(format!(
                "`--columns` names only {lead} columns, so the {other}'s columns follow them by position, which needs the same column count{after}: {counts}"
            ));
            return Vec::new();
        }
        if pt.is_empty() {
            pt = ps.clone();
        } else {
            ps = pt.clone();
        }
    }
    let cs: Vec<usize> = ps.iter().map(|&p| ks[p]).collect();
    let ct: Vec<usize> = pt.iter().map(|&p| kt[p]).collect();
    if cs.len() != ct.len() {
        let names = |fields: &arrow::datatypes::Fields, idx: &[usize]| {
            idx.iter()
                .map(|&i| fields[i].name().as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        problems.push(format!(
            "`--by-position` with `--columns` pairs each side's named columns in order, but the source has {} of them ({}) and the target {} ({}): name as many columns of each side",
            cs.len(),
            names(sf, &cs),
            ct.len(),
            names(tf, &ct)
        ));
    }
    cs.into_iter().zip(ct).collect()
}

/// When every column name of a side looks like a value (a number, a date),
/// its first line is probably data, not a header.
fn header_hint(a: &arrow::datatypes::Fields, b: &arrow::datatypes::Fields) -> String {
    let looks_like_data = |name: &str| {
        let n = name.trim();
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | ':' | ' ' | 'T'))
            && n.chars().any(|c| c.is_ascii_digit())
    };
    for (fields, side) in [(a, "source"), (b, "target")] {
        if !fields.is_empty() && fields.iter().all(|f| looks_like_data(f.name())) {
            return format!(
                " (the {side}'s header looks like data: if its files have no header line, pass `--no-header`)"
            );
        }
    }
    String::new()
}

/// When one side's only column name holds a `;`, `|` or tab, the file was
/// probably read with the wrong delimiter: say which to pass.
fn delimiter_hint(a: &arrow::datatypes::Fields, b: &arrow::datatypes::Fields) -> String {
    for fields in [a, b] {
        if fields.len() != 1 {
            continue;
        }
        let name = fields[0].name();
        for (c, flag) in [(';', "';'"), ('|', "'|'"), ('\t', "tab")] {
            if name.contains(c) {
                return format!(
                    " (the header '{name}' looks {}-delimited: pass `--delimiter {flag}`)",
                    if c == '\t' { "tab" } else { flag }
                );
            }
        }
    }
    String::new()
}

/// Decides how one pair's types meet: directly, through a cast the user
/// asked for, or through an assumed time zone. Records a problem otherwise.
fn type_pair(pair: &mut ColumnPair, opts: &AlignOptions, problems: &mut Vec<String>) {
    let (s, t) = (&pair.source_field, &pair.target_field);
    for f in [s, t] {
        if let Err(why) = check_supported(f.data_type()) {
            problems.push(format!("column '{}': {why}", f.name()));
            return;
        }
    }
    let (mut sc, mut tc) = (ValueClass::of(s.data_type()), ValueClass::of(t.data_type()));
    // A cast naming the column wins; `*=TYPE` applies to every pair that is
    // not comparable as it stands and that the cast makes comparable.
    let cast = opts
        .casts
        .iter()
        .find(|(c, _)| {
            eq_name(c, s.name(), opts.ignore_case_names)
                || eq_name(c, t.name(), opts.ignore_case_names)
        })
        .or_else(|| {
            opts.casts.iter().find(|(c, ty)| {
                let want = ValueClass::of(ty);
                c == "*" && !sc.compatible(&tc) && (sc.compatible(&want) || tc.compatible(&want))
            })
        })
        .map(|(_, ty)| ty.clone());
    if let Some(ty) = cast {
        let want = ValueClass::of(&ty);
        if !sc.compatible(&want) {
            pair.source_convert = Some(Convert::Cast(ty.clone()));
            sc = want.clone();
        }
        if !tc.compatible(&want) {
            pair.target_convert = Some(Convert::Cast(ty.clone()));
            tc = want.clone();
        }
        // Both sides already of the class: cast both, so e.g. decimals share a scale.
        if pair.source_convert.is_none() && pair.target_convert.is_none() {
            pair.source_convert = Some(Convert::Cast(ty.clone()));
            pair.target_convert = Some(Convert::Cast(ty));
        }
    }
    let zoned_naive = matches!(
        (&sc, &tc),
        (ValueClass::Timestamp, ValueClass::TimestampZoned)
            | (ValueClass::TimestampZoned, ValueClass::Timestamp)
    );
    if zoned_naive {
        match &opts.assume_tz {
            Some(tz) => {
                let convert = Some(Convert::AssumeTz(tz.clone()));
                if sc == ValueClass::Timestamp {
                    pair.source_convert = convert;
                    sc = ValueClass::TimestampZoned;
                } else {
                    pair.target_convert = convert;
                    tc = ValueClass::TimestampZoned;
                }
            }
            None => {
                problems.push(format!(
                    "column '{}' is {} in source but {} in target: a zoned timestamp is not comparable with a naive one; pass `--assume-tz TZ` to read the naive side in a zone",
                    s.name(),
                    s.data_type(),
                    t.data_type()
                ));
                return;
            }
        }
    }
    if !sc.compatible(&tc) {
        let hint = if is_text(&sc) != is_text(&tc) {
            format!("; parse the text side with `--cast {}=TYPE`", s.name())
        } else {
            cast_hint(s.name(), s.data_type(), t.data_type())
        };
        problems.push(format!(
            "column '{}' is {} in source but {} in target: not comparable by value{hint}",
            s.name(),
            s.data_type(),
            t.data_type()
        ));
        return;
    }
    let class = if matches!(sc, ValueClass::Null) {
        tc
    } else {
        sc
    };
    let mut rule = class_rule(&class).to_string();
    for (side, conv) in [
        ("source", &pair.source_convert),
        ("target", &pair.target_convert),
    ] {
        match conv {
            Some(Convert::Cast(ty)) => rule.push_str(&format!("; {side} cast to {ty}")),
            Some(Convert::AssumeTz(tz)) => rule.push_str(&format!("; {side} read in {tz}")),
            None => {}
        }
    }
    pair.rule = rule;
}

/// The `--cast` spelling of a type, when [`parse_type`] reads it back.
pub(crate) fn cast_name(dt: &DataType) -> Option<String> {
    let unit = |u: &TimeUnit| crate::units::name(*u);
    Some(match dt {
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Utf8 => "string".into(),
        DataType::Boolean => "bool".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => {
            format!("decimal({p},{s})")
        }
        DataType::Decimal256(p, s) => format!("decimal({p},{s})"),
        DataType::Timestamp(u, None) => format!("timestamp({})", unit(u)),
        DataType::Timestamp(u, Some(tz)) => format!("timestamp({}, {tz})", unit(u)),
        _ => return None,
    })
}

/// The hint for two typed columns of different classes: which side to cast,
/// into what, so that no value has to change (the lossless direction), and
/// what the other direction would demand of the data.
fn cast_hint(column: &str, s: &DataType, t: &DataType) -> String {
    use ValueClass as C;
    // (the side to cast up, the type to cast it into, what casting the other side down needs)
    let up = |from: &DataType, into: &DataType| -> Option<(DataType, DataType, &'static str)> {
        let (fc, ic) = (ValueClass::of(from), ValueClass::of(into));
        let down = match (&fc, &ic) {
            (C::Date, C::Timestamp | C::TimestampZoned) => "every time of day to be midnight",
            (C::Integer, C::Decimal) => "every value to be whole",
            (C::Integer, C::Float) => "every value to be whole",
            (C::Float, C::Decimal) => "every value to fit a float exactly",
            _ => return None,
        };
        let into = match (&fc, into) {
            // An integer needs room for 19 digits before the point.
            (C::Integer, DataType::Decimal128(_, sc)) if *sc >= 0 && *sc <= 19 => {
                DataType::Decimal128(19 + *sc as u8, *sc)
            }
            (C::Integer, DataType::Float16 | DataType::Float32) => DataType::Float64,
            _ => into.clone(),
        };
        Some((from.clone(), into, down))
    };
    let found = up(s, t)
        .map(|u| ("source", u))
        .or_else(|| up(t, s).map(|u| ("target", u)));
    match found {
        Some((side, (from, into, down))) => match cast_name(&into) {
            Some(name) => {
                let other = if side == "source" { t } else { s };
                format!(
                    "; cast the {side}'s {from} up with `--cast {column}={name}`; casting the {other} side down to {} would need {down}",
                    cast_name(&from).unwrap_or_else(|| from.to_string())
                )
            }
            None => format!("; convert one side with `--cast {column}=TYPE`"),
        },
        None => format!(
            "; convert one side with `--cast {column}=TYPE` (recon refuses any value the cast would change)"
        ),
    }
}

/// Renders the plan as the `recon schema` screen.
pub(crate) fn render_plan(plan: &ComparePlan) -> String {
    let side = |f: &Field| {
        format!(
            "{} {}{}",
            f.name(),
            f.data_type(),
            if f.is_nullable() { "" } else { " NOT NULL" }
        )
    };
    let mut rows: Vec<[String; 5]> = vec![[
        "#".into(),
        "source".into(),
        "target".into(),
        "pairing".into(),
        "rule".into(),
    ]];
    for (i, c) in plan.columns.iter().enumerate() {
        let mut rule = c.rule.clone();
        for n in &c.normalize {
            rule.push_str("; ");
            rule.push_str(&n.describe());
        }
        rows.push([
            (i + 1).to_string(),
            side(&c.source_field),
            side(&c.target_field),
            c.pairing.clone(),
            rule,
        ]);
    }
    for k in &plan.skipped {
        let (s, t) = if k.side == Side::Source {
            (side(&k.field), "-".to_string())
        } else {
            ("-".to_string(), side(&k.field))
        };
        rows.push(["-".into(), s, t, "not compared".into(), k.why.clone()]);
    }
    let widths: Vec<usize> = (0..4)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        for (i, w) in widths.iter().enumerate() {
            out.push_str(&format!("{:<w$}  ", r[i], w = *w));
        }
        out.push_str(&r[4]);
        out.push('\n');
    }
    out.push('\n');
    if plan.is_compatible() {
        out.push_str(&format!(
            "verdict: compatible ({} column{} compared)\n",
            plan.columns.len(),
            if plan.columns.len() == 1 { "" } else { "s" }
        ));
    } else {
        out.push_str("verdict: incompatible\n");
        for p in &plan.problems {
            out.push_str(&format!("  - {}\n", as_flags(p)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The problems as the CLI shows them.
    fn flags(problems: &[String]) -> Vec<String> {
        problems.iter().map(|p| as_flags(p)).collect()
    }
    use crate::config::{parse_type, Rule};

    fn schema(fields: Vec<(&str, DataType)>) -> Schema {
        Schema::new(
            fields
                .into_iter()
                .map(|(n, t)| Field::new(n, t, true))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn by_name_pairs_reordered_columns() {
        let s = schema(vec![("a", DataType::Utf8), ("b", DataType::Int32)]);
        let t = schema(vec![("b", DataType::Int64), ("a", DataType::LargeUtf8)]);
        let p = plan(&s, &t, &AlignOptions::default());
        assert!(p.is_compatible(), "{:?}", flags(&p.problems));
        assert_eq!(p.columns[0].target_index, 1);
        assert_eq!(p.columns[1].rule, "integer by value");
    }

    #[test]
    fn extra_columns_need_an_explicit_choice() {
        let s = schema(vec![("a", DataType::Utf8), ("x", DataType::Int32)]);
        let t = schema(vec![("a", DataType::Utf8), ("y", DataType::Int32)]);
        let p = plan(&s, &t, &AlignOptions::default());
        assert_eq!(flags(&p.problems).len(), 2, "{:?}", flags(&p.problems));
        let p = plan(
            &s,
            &t,
            &AlignOptions {
                ignore_extra_columns: true,
                ..Default::default()
            },
        );
        assert!(p.is_compatible());
        let p = plan(
            &s,
            &t,
            &AlignOptions {
                maps: vec![("x".into(), "y".into())],
                ..Default::default()
            },
        );
        assert!(p.is_compatible());
        assert_eq!(p.columns.len(), 2);
    }

    #[test]
    fn case_insensitive_names_and_positions() {
        let s = schema(vec![("Amount", DataType::Int32), ("ID", DataType::Int32)]);
        let t = schema(vec![("amount", DataType::Int32), ("id", DataType::Int32)]);
        assert!(!plan(&s, &t, &AlignOptions::default()).is_compatible());
        let ci = AlignOptions {
            ignore_case_names: true,
            ..Default::default()
        };
        assert!(plan(&s, &t, &ci).is_compatible());
        let pos = AlignOptions {
            by_position: true,
            ..Default::default()
        };
        let p = plan(&s, &t, &pos);
        assert!(p.is_compatible());
        assert_eq!(p.columns[0].pairing, "position");
        let short = schema(vec![("amount", DataType::Int32)]);
        assert!(!plan(&s, &short, &pos).is_compatible());
    }

    type Names = Vec<(String, String)>;

    /// The (source, target) names the plan compares, and (name, why) of the skipped.
    fn pairs_and_skips(p: &ComparePlan) -> (Names, Names) {
        let pairs = p
            .columns
            .iter()
            .map(|c| (c.source_name.clone(), c.target_name.clone()))
            .collect();
        let skips = p
            .skipped
            .iter()
            .map(|k| (k.field.name().clone(), k.why.clone()))
            .collect();
        (pairs, skips)
    }

    #[test]
    fn columns_select_each_side_before_pairing_by_position() {
        let ints = |names: &[&str]| schema(names.iter().map(|n| (*n, DataType::Int64)).collect());
        let wide = ints(&["id", "amount", "load_ts", "note"]);
        let renamed = ints(&["ID_", "AMT"]);
        let subset = |names: &[&str]| AlignOptions {
            by_position: true,
            columns: Some(names.iter().map(|n| n.to_string()).collect()),
            ..Default::default()
        };
        // Two named columns on each side (sides of different widths) pair in order.
        let p = plan(&wide, &renamed, &subset(&["id", "amount", "ID_", "AMT"]));
        assert!(p.is_compatible(), "{:?}", flags(&p.problems));
        let (pairs, skips) = pairs_and_skips(&p);
        assert_eq!(
            pairs,
            [("id".into(), "ID_".into()), ("amount".into(), "AMT".into())]
        );
        assert!(skips.contains(&("load_ts".into(), "not in --columns".into())));
        // The list's order does not matter: each side keeps its own order.
        let p = plan(&wide, &renamed, &subset(&["AMT", "amount", "ID_", "id"]));
        assert_eq!(pairs_and_skips(&p).0, pairs);

        // A side with none of the names (a header-less file) follows by position.
        let bare = ints(&["column_1", "column_2", "column_3", "column_4"]);
        let p = plan(&bare, &wide, &subset(&["id", "note"]));
        assert!(p.is_compatible(), "{:?}", flags(&p.problems));
        assert_eq!(
            pairs_and_skips(&p).0,
            [
                ("column_1".into(), "id".into()),
                ("column_4".into(), "note".into())
            ]
        );
        // ... after --exclude, and only when the column counts agree.
        let mut excluding = subset(&["note"]);
        excluding.exclude = vec!["load_ts".into(), "column_3".into()];
        let p = plan(&bare, &wide, &excluding);
        assert_eq!(pairs_and_skips(&p).0, [("column_4".into(), "note".into())]);
        let p = plan(&bare, &renamed, &subset(&["AMT"]));
        assert_eq!(
            flags(&p.problems),
            ["--columns names only target columns, so the source's columns follow them by position, which needs the same column count: source has 4, target has 2"]
        );

        // Unequal counts of named columns, and an unknown name, are problems.
        let p = plan(&wide, &renamed, &subset(&["id", "amount", "AMT"]));
        assert_eq!(
            flags(&p.problems),
            ["--by-position with --columns pairs each side's named columns in order, but the source has 2 of them (id, amount) and the target 1 (AMT): name as many columns of each side"]
        );
        let p = plan(&wide, &renamed, &subset(&["id", "AMT", "amout"]));
        assert_eq!(
            flags(&p.problems),
            ["--columns: no column named 'amout' in source or target"]
        );
    }

    #[test]
    fn zoned_against_naive_needs_assume_tz() {
        let s = schema(vec![(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, None),
        )]);
        let t = schema(vec![(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
        )]);
        let p = plan(&s, &t, &AlignOptions::default());
        assert!(
            flags(&p.problems)[0].contains("--assume-tz"),
            "{:?}",
            flags(&p.problems)
        );
        let p = plan(
            &s,
            &t,
            &AlignOptions {
                assume_tz: Some("Europe/Paris".into()),
                ..Default::default()
            },
        );
        assert!(p.is_compatible(), "{:?}", flags(&p.problems));
        assert_eq!(
            p.columns[0].source_convert,
            Some(Convert::AssumeTz("Europe/Paris".into()))
        );
    }

    #[test]
    fn string_against_number_suggests_cast() {
        let s = schema(vec![("amount", DataType::Utf8)]);
        let t = schema(vec![("amount", DataType::Decimal128(18, 2))]);
        let p = plan(&s, &t, &AlignOptions::default());
        assert!(
            flags(&p.problems)[0].contains("--cast amount=TYPE"),
            "{:?}",
            flags(&p.problems)
        );
        let p = plan(
            &s,
            &t,
            &AlignOptions {
                casts: vec![("amount".into(), parse_type("decimal(18,2)").unwrap())],
                ..Default::default()
            },
        );
        assert!(p.is_compatible(), "{:?}", flags(&p.problems));
        assert!(p.columns[0].source_convert.is_some());
        assert!(p.columns[0].target_convert.is_none());
    }

    #[test]
    fn rules_apply_to_eligible_columns() {
        let s = schema(vec![
            ("name", DataType::Utf8),
            ("amount", DataType::Float64),
        ]);
        let opts = AlignOptions {
            rules: vec![
                Rule {
                    column: "*".into(),
                    rule: Normalize::Trim,
                },
                Rule {
                    column: "amount".into(),
                    rule: Normalize::Round(2),
                },
            ],
            ..Default::default()
        };
        let p = plan(&s, &s, &opts);
        assert!(p.is_compatible(), "{:?}", flags(&p.problems));
        assert_eq!(p.columns[0].normalize, vec![Normalize::Trim]);
        assert_eq!(p.columns[1].normalize, vec![Normalize::Round(2)]);
        let bad = AlignOptions {
            rules: vec![Rule {
                column: "name".into(),
                rule: Normalize::Round(2),
            }],
            ..Default::default()
        };
        assert!(!plan(&s, &s, &bad).is_compatible());
    }

    #[test]
    fn types_parse() {
        assert_eq!(
            parse_type("decimal(18,2)").unwrap(),
            DataType::Decimal128(18, 2)
        );
        assert_eq!(
            parse_type("timestamp(ms, Europe/Paris)").unwrap(),
            DataType::Timestamp(TimeUnit::Millisecond, Some("Europe/Paris".into()))
        );
        assert_eq!(parse_type("int64").unwrap(), DataType::Int64);
        assert!(parse_type("decimal(99,2)").is_err());
        assert!(parse_type("money").is_err());
    }
}
