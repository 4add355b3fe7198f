//! Dialect sniffing: the delimiter, quote, escape and header of a CSV file,
//! from its first records, for whichever of them the user did not give.
//!
//! A candidate dialect fits the sample when recon's strict lexer reads every
//! complete record of it without error and every record has the same number
//! of fields. Among the fitting candidates:
//! - the delimiter is the one of `,` `;` `|` tab that gives two or more
//!   columns; two that both do make the sample ambiguous, and recon refuses,
//!   naming them, rather than guess (`1;1,5` is two columns either way);
//! - the quote is one the sample actually uses to quote a field (`"` or `'`);
//!   with no quoted field in the sample, `"` if it fits, else none. Never `'`
//!   without evidence: apostrophes are common in plain text;
//!   A quote chosen without evidence is checked on every later record: a
//!   quoted field after the sample is an error, since quoting and no quoting
//!   read it differently and the sample cannot say which the file meant;
//! - the escape is none (quotes doubled, RFC 4180) when that fits, else `\`;
//! - the header: the first record is data when every column whose other
//!   values are all numbers or dates holds a number or date there too, and at
//!   least one such column exists (a lone record: when it holds an unquoted
//!   number or date); otherwise it is a header (the default
//!   recon always had). When no column gives evidence either way the guess
//!   is marked unsure, and pairing by position refuses it (see
//!   `plan::typing`): there a wrong guess would add or drop a row unseen.
//!
//! Why a wrong sniff cannot make a false match: the lexer and the field
//! count are enforced on every record of the file, not just the sample, so
//! a dialect that only fits the sample fails later with an error naming the
//! line; a wrong delimiter or header gives column names the other side does
//! not have; and where the sample gives no evidence the choice is the one
//! recon made before it sniffed.

use super::lex::{last_record_end, Dialect, Lexer, RecordBuf};
use super::parse;
pub(crate) use crate::config::Sniff;

/// The dialect a sample reads as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sniffed {
    pub dialect: Dialect,
    pub header: bool,
    /// The header choice rests on no evidence (every column is text).
    pub header_unsure: bool,
    /// The quote was chosen with no quoted field in the sample, where no
    /// quoting would have read it the same; a quoted field later is refused.
    pub quote_unproven: bool,
    /// Lines to skip at the top of the file: those before the sample, plus
    /// a preamble sniffing found (then `preamble` is true).
    pub skip_rows: usize,
    pub preamble: bool,
    /// Lines at the top look like a preamble, or some like comments, but
    /// the evidence is not clear enough to skip them: what to suggest.
    pub hint: Option<Hint>,
}

/// What errors a preamble or comment lines cause should suggest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hint {
    /// Lines from the top of the file the hint is about: the preamble's, or
    /// up to the first comment line.
    pub lines: usize,
    /// `--skip-rows lines` would skip the preamble.
    pub skip: bool,
    /// `--comment '#'` would skip lines starting with `#`.
    pub comment: bool,
    /// The lines after the preamble are rows by evidence: `--no-header` too.
    pub no_header: bool,
}

impl Hint {
    pub(crate) fn words(&self) -> String {
        let n = self.lines;
        let lines = if n == 1 {
            "line looks".to_string()
        } else {
            format!("{n} lines look")
        };
        let (before, no_header) = if self.no_header {
            ("rows without a header", " `--no-header`")
        } else {
            ("the header", "")
        };
        match (self.skip, self.comment) {
            (true, false) => format!(
                "the first {lines} like a preamble (a title, notes or comments) before {before}: if so, pass `--skip-rows {n}`{no_header}"
            ),
            (true, true) => format!(
                "the first {lines} like a preamble before {before} and lines starting with '#' like comments: if so, pass `--skip-rows {n}` `--comment '#'`{no_header}"
            ),
            _ => format!(
                "lines starting with '#' look like comments (line {n} is the first): if so, pass `--comment '#'`"
            ),
        }
    }
}

/// How the chosen reading of a sample came out, for preamble detection.
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    /// Fields per record, when every record has the same count.
    columns: Option<usize>,
    records: usize,
    /// The first record is a header by the evidence of the columns' kinds
    /// (whatever the user said about the header).
    header_evidence: bool,
    /// The first record is a row by that evidence.
    data_evidence: bool,
    /// Some field is quoted: the quote is proven, not a default.
    quoted: bool,
    /// Every record ends with an empty unquoted field (a delimiter).
    trailing: bool,
}

impl Shape {
    /// Two or more columns on every record: a table, not lines of text.
    fn wide(&self) -> bool {
        self.columns.is_some_and(|c| c >= 2)
    }
}

/// Lines at the top of a sample sniffing looks through for a preamble.
const MAX_PREAMBLE: usize = 50;

/// Records read from a sample, at most.
const SAMPLE_RECORDS: usize = 1000;

/// How one candidate dialect reads the sample.
struct Reading {
    dialect: Dialect,
    /// Fields per record, when every record has the same count.
    columns: Option<usize>,
    /// Fields written in quotes.
    quoted: usize,
    records: Vec<Vec<(String, bool)>>,
}

/// How `d` reads `sample`, or the lexer's message.
fn read(sample: &[u8], d: Dialect) -> Result<Reading, String> {
    let mut lex = Lexer::new(sample, d);
    let mut rec = RecordBuf::default();
    let mut records = Vec::new();
    let mut columns = None;
    let mut uneven = false;
    let mut quoted = 0;
    while records.len() < SAMPLE_RECORDS {
        match lex.next_record(&mut rec) {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => return Err(e.message),
        }
        if rec.is_blank_line() {
            continue;
        }
        let n = rec.len();
        match columns {
            None => columns = Some(n),
            Some(c) if c != n => uneven = true,
            Some(_) => {}
        }
        let fields: Vec<(String, bool)> = (0..n)
            .filter_map(|i| rec.field(i))
            .map(|(b, q)| {
                quoted += usize::from(q);
                (String::from_utf8_lossy(b).into_owned(), q)
            })
            .collect();
        records.push(fields);
    }
    Ok(Reading {
        dialect: d,
        columns: if uneven { None } else { columns },
        quoted,
        records,
    })
}

/// The delimiter of a ragged sample: the one that splits the first record
/// (the header) in two or more and that the most later records agree with.
fn ragged(uneven: &[Reading]) -> Option<u8> {
    uneven
        .iter()
        .filter(|r| r.records[0].len() >= 2)
        .max_by_key(|r| {
            let n = r.records[0].len();
            r.records.iter().filter(|x| x.len() == n).count()
        })
        .map(|r| r.dialect.delimiter)
}

fn show(b: u8) -> String {
    match b {
        b'\t' => "tab".to_string(),
        b => format!("'{}'", b as char),
    }
}

/// A value's kind for header detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    Date,
    Text,
}

fn kind(v: &str) -> Kind {
    let v = v.trim();
    if v.bytes().any(|c| c.is_ascii_digit()) && parse::parse_f64(v).is_ok() {
        Kind::Number
    } else if parse::parse_timestamp(v, parse::Unit::Microsecond, Some("UTC")).is_ok() {
        Kind::Date
    } else {
        Kind::Text
    }
}

/// Whether the first record is a header, and whether that rests on evidence.
fn header_of(records: &[Vec<(String, bool)>]) -> (bool, bool) {
    let Some((first, rest)) = records.split_first() else {
        return (true, true);
    };
    // A lone record holding a number or a date is a row: header names
    // are words.
    if rest.is_empty() {
        let data = first.iter().any(|(v, q)| !q && kind(v) != Kind::Text);
        return (!data, !data);
    }
    let (mut header_votes, mut data_votes) = (0, 0);
    for (j, (v, _)) in first.iter().enumerate() {
        let kinds: Vec<Kind> = rest
            .iter()
            .filter_map(|r| r.get(j))
            .filter(|(s, _)| !s.trim().is_empty())
            .map(|(s, _)| kind(s))
            .collect();
        let Some(&k) = kinds.first() else { continue };
        if k == Kind::Text || kinds.iter().any(|&x| x != k) {
            continue;
        }
        if v.trim().is_empty() {
            continue;
        }
        if kind(v) == k {
            data_votes += 1;
        } else {
            header_votes += 1;
        }
    }
    if header_votes > 0 {
        (true, false)
    } else if data_votes > 0 {
        (false, false)
    } else {
        (true, true)
    }
}

/// Sniffs what `sniff` leaves open from `sample`, the start of a file after
/// its byte-order mark and the `before` lines that come before the header
/// as given (skipped, blank or comment lines); `given` holds the user's
/// settings for the rest. `eof`: the sample is the whole file.
///
/// A preamble (title, notes, export banner, `#` comments) is skipped when
/// the evidence is clear, and only then (see [`find_preamble`]); where it is
/// not, the result (or the error) carries a [`Hint`] naming the option.
pub(crate) fn sniff(
    sample: &[u8],
    eof: bool,
    given: Dialect,
    given_header: bool,
    sniff: Sniff,
    before: usize,
) -> Result<Sniffed, String> {
    let plain = sniff_at(sample, eof, given, given_header, sniff);
    // A sample that reads as a table as it is has no preamble: every line
    // of it is part of the consistent block.
    if matches!(&plain, Ok((_, shape)) if shape.wide()) {
        return plain.map(|(s, _)| Sniffed {
            skip_rows: before,
            ..s
        });
    }
    let found = if sniff.preamble {
        find_preamble(sample, eof, given, given_header, sniff)
    } else {
        None
    };
    // A block that needs another quote than the whole sample proves it
    // uses starts inside a quoted field (a multi-line value whose inner
    // lines look like records): no preamble then, only a hint.
    let quote_proven = match &plain {
        Ok((p, shape)) if shape.quoted => Some(p.dialect.quote),
        _ => None,
    };
    let hint = match found {
        Some(p) if p.clear && quote_proven.is_none_or(|q| q == p.sniffed.dialect.quote) => {
            return Ok(Sniffed {
                skip_rows: before + p.lines,
                preamble: true,
                ..p.sniffed
            })
        }
        Some(p) => Some(Hint {
            lines: p.lines,
            skip: true,
            comment: false,
            no_header: p.rows_follow,
        }),
        None => comment_hint(sample, eof, given, given_header, sniff),
    }
    .map(|h| Hint {
        lines: h.lines + before,
        ..h
    });
    match plain {
        Ok((s, _)) => Ok(Sniffed {
            skip_rows: before,
            hint,
            ..s
        }),
        Err(m) => Err(match hint {
            Some(h) => format!("{m}; {}", h.words()),
            None => m,
        }),
    }
}

/// Lines before a block of records that read alike.
struct Preamble {
    lines: usize,
    /// How the block reads.
    sniffed: Sniffed,
    /// The lines are a preamble by clear evidence.
    clear: bool,
    /// The block starts with a row, not a header, by the evidence of its
    /// columns (the header left to sniffing).
    rows_follow: bool,
}

/// The preamble of `sample`: the fewest lines (at most [`MAX_PREAMBLE`])
/// after which it reads as a table of two or more columns, two or more
/// records, every record alike to the end of the sample; with how that
/// table reads and whether the evidence is clear. None when no such block
/// follows lines that look like a preamble.
///
/// Lines look like a preamble when each (blank ones aside) starts with `#`
/// or has fewer fields than the block: a line with as many or more could be
/// its header or a row, and is never skipped. The evidence is clear when
/// every such line starts with `#` (a comment preamble), or when the block's
/// first record is a header by the kinds of its columns (a number or date
/// column under a word): a ragged file's short rows are followed by rows,
/// not by a header. A header the user gave is no evidence: it says the file
/// has one, not where it starts.
fn find_preamble(
    sample: &[u8],
    eof: bool,
    given: Dialect,
    given_header: bool,
    sniff: Sniff,
) -> Option<Preamble> {
    // Cheap first: no delimiter after the first line, no block of two or
    // more columns (one-column files are common and each try reads the sample).
    let after_first = memchr::memchr(b'\n', sample).map_or(sample.len(), |i| i + 1);
    let delimiters: &[u8] = if sniff.delimiter {
        b",;|\t"
    } else {
        std::slice::from_ref(&given.delimiter)
    };
    if !sample[after_first..].iter().any(|b| delimiters.contains(b)) {
        return None;
    }
    let mut at = 0;
    for lines in 1..=MAX_PREAMBLE {
        at += memchr::memchr(b'\n', &sample[at..])? + 1;
        let rest = &sample[at..];
        let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
        // The block starts with a record: not blank, not a comment.
        if line.iter().all(u8::is_ascii_whitespace) || given.comment == line.first().copied() {
            continue;
        }
        let Ok((found, shape)) = sniff_at(rest, eof, given, given_header, sniff) else {
            continue;
        };
        let Some(columns) = shape.columns.filter(|_| shape.wide() && shape.records >= 2) else {
            continue;
        };
        let mut comments = true;
        let mut last = 0;
        for l in sample[..at].split(|&b| b == b'\n') {
            // Blank lines and comment lines (a comment byte given) are no rows.
            if l.iter().all(u8::is_ascii_whitespace)
                || (given.comment.is_some() && l.first() == given.comment.as_ref())
            {
                continue;
            }
            let hash = l.first() == Some(&b'#');
            comments &= hash;
            last = fields_alone(l, found.dialect);
            if !hash && last >= columns {
                return None;
            }
        }
        // A header one field short of rows that all end with a delimiter is
        // the header of a file whose rows have a trailing delimiter.
        if shape.trailing && last + 1 == columns {
            return None;
        }
        let header = shape.header_evidence && (sniff.header || given_header);
        return Some(Preamble {
            lines,
            sniffed: found,
            clear: comments || header,
            rows_follow: sniff.header && shape.data_evidence,
        });
    }
    None
}

/// Fields of one line read alone; a line that does not lex (an open quote
/// in a title) is one field of text.
fn fields_alone(line: &[u8], d: Dialect) -> usize {
    let d = Dialect { comment: None, ..d };
    let mut rec = RecordBuf::default();
    match Lexer::new(line, d).next_record(&mut rec) {
        Ok(Some(_)) => rec.len(),
        _ => 1,
    }
}

/// The hint for a sample with lines starting with `#` that would read as a
/// table with `--comment '#'` (and maybe `--skip-rows`); the comment byte is
/// never sniffed, since `#` starts data too (`#ff0000`, `#3 seed`) and a
/// comment byte applies to every line of the file.
fn comment_hint(
    sample: &[u8],
    eof: bool,
    given: Dialect,
    given_header: bool,
    sniff: Sniff,
) -> Option<Hint> {
    if given.comment.is_some() {
        return None;
    }
    let first = sample
        .split(|&b| b == b'\n')
        .take(SAMPLE_RECORDS)
        .position(|l| l.first() == Some(&b'#'))?;
    let with = Dialect {
        comment: Some(b'#'),
        ..given
    };
    if matches!(sniff_at(sample, eof, with, given_header, sniff), Ok((_, shape)) if shape.wide()) {
        return Some(Hint {
            lines: first + 1,
            skip: false,
            comment: true,
            no_header: false,
        });
    }
    if !sniff.preamble {
        return None;
    }
    let p = find_preamble(sample, eof, with, given_header, sniff)?;
    Some(Hint {
        lines: p.lines,
        no_header: p.rows_follow,
        skip: true,
        comment: true,
    })
}

/// Sniffs the sample as it is, with no preamble; also how the chosen
/// reading came out.
fn sniff_at(
    sample: &[u8],
    eof: bool,
    given: Dialect,
    given_header: bool,
    sniff: Sniff,
) -> Result<(Sniffed, Shape), String> {
    let (mut fits, unterminated) = readings(sample, eof, given, sniff);
    // A quoted field the file never closes is a cut or broken file, not a
    // sign that quotes are plain data; and when nothing reads the sample,
    // reading it as given reports the first bad line.
    if unterminated {
        fits.retain(|r| r.dialect.quote.is_some());
    }
    if fits.is_empty() || (unterminated && sniff.quote) {
        let s = Sniffed {
            dialect: given,
            header: given_header,
            header_unsure: false,
            quote_unproven: false,
            skip_rows: 0,
            preamble: false,
            hint: None,
        };
        return Ok((s, Shape::default()));
    }
    let lexed = std::mem::take(&mut fits);
    let (mut fits, uneven): (Vec<Reading>, Vec<Reading>) =
        lexed.into_iter().partition(|r| r.columns.is_some());
    // The delimiter.
    let delimiter = choose_delimiter(&fits, &uneven, given, sniff)?;
    fits.retain(|r| r.dialect.delimiter == delimiter);
    if fits.is_empty() {
        // Ragged: read with what the header says, and let reading name the line.
        fits = uneven
            .into_iter()
            .filter(|r| r.dialect.delimiter == delimiter)
            .collect();
    }
    if fits.is_empty() {
        return Err(format!(
            "the first lines do not read alike with delimiter {} (uneven field counts, or a quote error with every quote recon knows): pass `--delimiter` and `--quote` (or `--quote none`) as the file is written",
            show(delimiter)
        ));
    }
    // The quote: one the sample uses, else '"' if it reads, else none.
    let (quote, quote_unproven) = choose_quote(&fits, given, sniff)?;
    fits.retain(|r| r.dialect.quote == quote);
    let escape = if sniff.escape {
        if fits.iter().any(|r| r.dialect.escape.is_none()) {
            None
        } else {
            fits.first().and_then(|r| r.dialect.escape)
        }
    } else {
        given.escape
    };
    let chosen = fits
        .iter()
        .find(|r| r.dialect.escape == escape)
        .ok_or_else(|| "no dialect reads the first lines".to_string())?;
    let evidence = header_of(&chosen.records);
    let (header, header_unsure) = if sniff.header {
        evidence
    } else {
        (given_header, false)
    };
    let shape = Shape {
        columns: chosen.columns,
        records: chosen.records.len(),
        header_evidence: evidence == (true, false),
        data_evidence: evidence == (false, false),
        quoted: chosen.quoted > 0,
        trailing: chosen
            .records
            .iter()
            .all(|r| r.last().is_some_and(|(v, q)| v.is_empty() && !q)),
    };
    let s = Sniffed {
        dialect: chosen.dialect,
        header,
        header_unsure,
        quote_unproven,
        skip_rows: 0,
        preamble: false,
        hint: None,
    };
    Ok((s, shape))
}

/// The dialects to try on a sample: the delimiters, quotes and escapes
/// sniffing may choose among (only the given one of each not sniffed).
fn candidates(
    sample: &[u8],
    given: Dialect,
    sniff: Sniff,
) -> (Vec<u8>, Vec<Option<u8>>, Vec<Option<u8>>) {
    // Delimiters the sample lacks all read it as one column, so one of
    // them stands for the rest, beside those present and the default.
    let present = |b: u8| memchr::memchr(b, sample).is_some();
    let delimiters: Vec<u8> = if sniff.delimiter {
        let all = [b',', b';', b'|', b'\t'];
        let mut d: Vec<u8> = all
            .into_iter()
            .filter(|&d| d == given.delimiter || present(d))
            .collect();
        d.extend(all.into_iter().find(|&x| !d.contains(&x) && !present(x)));
        d
    } else {
        vec![given.delimiter]
    };
    let quotes: Vec<Option<u8>> = if sniff.quote {
        let mut q = vec![Some(b'"')];
        if present(b'\'') {
            q.push(Some(b'\''));
        }
        if present(b'"') || present(b'\'') {
            q.push(None);
        }
        q
    } else {
        vec![given.quote]
    };
    let escapes: Vec<Option<u8>> = if sniff.escape && present(b'\\') {
        vec![None, Some(b'\\')]
    } else if sniff.escape {
        vec![None]
    } else {
        vec![given.escape]
    };
    (delimiters, quotes, escapes)
}

/// Every candidate dialect that lexes the sample's whole records, and
/// whether the default quote left a quoted field unterminated.
fn readings(sample: &[u8], eof: bool, given: Dialect, sniff: Sniff) -> (Vec<Reading>, bool) {
    let (delimiters, quotes, escapes) = candidates(sample, given, sniff);
    // Every candidate that lexes; `fits` keeps those reading every line alike.
    let mut fits: Vec<Reading> = Vec::new();
    let mut unterminated = false;
    for &delimiter in &delimiters {
        for &quote in &quotes {
            for &escape in &escapes {
                let d = Dialect {
                    delimiter,
                    quote,
                    escape,
                    comment: given.comment,
                };
                if d.validate().is_err() {
                    continue;
                }
                // Only whole records: the sample may end inside one.
                let end = if eof {
                    sample.len()
                } else {
                    last_record_end(sample, &d).unwrap_or(0)
                };
                match read(&sample[..end], d) {
                    Ok(r) if !r.records.is_empty() => fits.push(r),
                    Ok(_) => {}
                    // Only the default quote: a field starting with an
                    // apostrophe ('90s) opens a "quote" no one meant.
                    Err(m) => unterminated |= quote == Some(b'"') && m.contains("unterminated"),
                }
            }
        }
    }
    (fits, unterminated)
}

/// The delimiter, among the readings that read every line alike (`fits`)
/// or not (`uneven`): the one that splits the sample into columns.
fn choose_delimiter(
    fits: &[Reading],
    uneven: &[Reading],
    given: Dialect,
    sniff: Sniff,
) -> Result<u8, String> {
    Ok(if sniff.delimiter {
        let ragged = ragged(uneven);
        let mut wide: Vec<(u8, usize)> = Vec::new();
        for r in fits {
            let c = r.columns.unwrap_or(0);
            if c >= 2 && !wide.iter().any(|(d, _)| *d == r.dialect.delimiter) {
                wide.push((r.dialect.delimiter, c));
            }
        }
        match wide.as_slice() {
            // A header split in two or more by a delimiter that some later
            // line breaks: a ragged file, which reading reports by line.
            [] if ragged.is_some() => ragged.unwrap_or(given.delimiter),
            [] if fits.is_empty() => {
                return Err(
                    "no delimiter among ',' ';' '|' tab reads the first lines with the same number of fields on every line: pass `--delimiter` (and `--quote`) as the file is written".to_string(),
                )
            }
            // No delimiter splits the sample: one column, which any delimiter
            // that reads it alike gives (the default when it does).
            [] if fits.iter().any(|r| r.dialect.delimiter == given.delimiter) => {
                given.delimiter
            }
            [] => fits[0].dialect.delimiter,
            [(d, _)] => *d,
            many => {
                let names: Vec<String> = many
                    .iter()
                    .map(|(d, c)| format!("{} ({c} columns)", show(*d)))
                    .collect();
                return Err(format!(
                    "the delimiter is ambiguous in the first lines: {} each read every line alike; pass `--delimiter`",
                    names.join(", ")
                ));
            }
        }
    } else {
        given.delimiter
    })
}

/// The quote, among the readings of the chosen delimiter: one the sample
/// uses, else '"' if it reads (unproven: nothing is quoted), else none.
fn choose_quote(
    fits: &[Reading],
    given: Dialect,
    sniff: Sniff,
) -> Result<(Option<u8>, bool), String> {
    let mut quote_unproven = false;
    let quote = if sniff.quote {
        let mut used: Vec<Option<u8>> = Vec::new();
        for r in fits.iter().filter(|r| r.quoted > 0) {
            if !used.contains(&r.dialect.quote) {
                used.push(r.dialect.quote);
            }
        }
        match used.as_slice() {
            [q] => *q,
            [] if fits.iter().any(|r| r.dialect.quote == Some(b'"')) => {
                // Nothing is quoted, so no quoting reads the sample alike.
                quote_unproven = true;
                Some(b'"')
            }
            [] if fits.iter().any(|r| r.dialect.quote.is_none()) => None,
            [] => fits[0].dialect.quote,
            many => {
                let names: Vec<String> = many.iter().flatten().map(|&q| show(q)).collect();
                return Err(format!(
                    "the quote is ambiguous in the first lines: fields are quoted with {}; pass `--quote`",
                    names.join(" and ")
                ));
            }
        }
    } else {
        given.quote
    };
    Ok((quote, quote_unproven))
}

/// The dialect in words, for the schema screen and the report.
pub(crate) fn describe(
    d: &Dialect,
    header: bool,
    sniff: Sniff,
    trailing: bool,
    skip_rows: usize,
) -> String {
    let mark = |sniffed: bool| if sniffed { " (sniffed)" } else { "" };
    let mut parts = vec![format!(
        "delimiter {}{}",
        show(d.delimiter),
        mark(sniff.delimiter)
    )];
    parts.push(match d.quote {
        Some(q) => format!("quote {}{}", show(q), mark(sniff.quote)),
        None => format!("no quoting{}", mark(sniff.quote)),
    });
    if let Some(e) = d.escape {
        parts.push(format!("escape {}{}", show(e), mark(sniff.escape)));
    }
    parts.push(format!(
        "{}{}",
        if header { "header" } else { "no header" },
        mark(sniff.header)
    ));
    if skip_rows > 0 {
        let lines = if skip_rows == 1 { "line" } else { "lines" };
        parts.push(if sniff.preamble {
            format!("skipped {skip_rows} preamble {lines} (sniffed)")
        } else {
            format!("skipped {skip_rows} {lines}")
        });
    }
    if let Some(c) = d.comment {
        parts.push(format!("comment {}", show(c)));
    }
    if trailing {
        parts.push("trailing delimiter".to_string());
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::hint::as_flags;

    const ALL: Sniff = Sniff {
        delimiter: true,
        quote: true,
        escape: true,
        header: true,
        preamble: true,
    };

    /// Errors as the CLI shows them (option hints as flags).
    fn sniffed(text: &str) -> Result<Sniffed, String> {
        sniff(text.as_bytes(), true, Dialect::default(), true, ALL, 0).map_err(|e| as_flags(&e))
    }

    fn dialect(delimiter: u8, quote: Option<u8>) -> Dialect {
        Dialect {
            delimiter,
            quote,
            escape: None,
            comment: None,
        }
    }

    #[test]
    fn delimiters() {
        for (text, d) in [
            ("a,b,c\n1,2,3\n", b','),
            ("a;b\n1;2,5\n3;4,25\n", b';'),
            ("a|b|\n1|2|\n", b'|'),
            ("a\tb\n1\t2\n", b'\t'),
            ("name;amount\n\"Smith, J\";1,5\n", b';'),
            ("only\n1\n2\n", b','),
        ] {
            assert_eq!(sniffed(text).unwrap().dialect.delimiter, d, "{text}");
        }
    }

    #[test]
    fn an_ambiguous_sample_is_refused_with_the_candidates() {
        let e = sniffed("1;1,5\n2;2,25\n").unwrap_err();
        assert!(
            e.contains("';' (2 columns)") && e.contains("',' (2 columns)"),
            "{e}"
        );
        let e = sniffed("a\n1,2;3|4\t5\n").unwrap_err();
        assert!(e.contains("pass --delimiter"), "{e}");
        // A ragged file keeps the delimiter its header shows; reading names the line.
        assert_eq!(
            sniffed("id,name\n1,x\n2\n").unwrap().dialect.delimiter,
            b','
        );
        // A one-column file of text with commas: no delimiter splits it.
        let s = sniffed("name\nSmith, J\nDoe\n").unwrap();
        assert_ne!(s.dialect.delimiter, b',');
    }

    #[test]
    fn quotes_need_evidence() {
        assert_eq!(
            sniffed("\"a\";\"b\"\n\"1\";\"x;y\"\n").unwrap().dialect,
            dialect(b';', Some(b'"'))
        );
        assert_eq!(
            sniffed("'a','b'\n'1','x,y'\n").unwrap().dialect,
            dialect(b',', Some(b'\''))
        );
        // Apostrophes in text do not make a quote.
        assert_eq!(
            sniffed("name,n\nO'Brien,1\n").unwrap().dialect,
            dialect(b',', Some(b'"'))
        );
        // Inch marks: '"' does not read, so no quoting.
        assert_eq!(
            sniffed("size,n\n5\",1\n6\",2\n").unwrap().dialect,
            dialect(b',', None)
        );
        let e = sniffed("\"a\",'b'\n\"1\",'2'\n").unwrap_err();
        assert!(e.contains("quote is ambiguous"), "{e}");
    }

    #[test]
    fn escapes_only_when_doubling_does_not_read() {
        let d = sniffed("a,b\n\"x \\\"y\\\" z\",1\n").unwrap().dialect;
        assert_eq!(d.escape, Some(b'\\'));
        let d = sniffed("a,b\n\"C:\\temp\",1\n").unwrap().dialect;
        assert_eq!(d.escape, None);
    }

    #[test]
    fn headers() {
        let s = sniffed("id,amount,day\n1,2.5,2024-01-01\n2,3,2024-01-02\n").unwrap();
        assert!(s.header && !s.header_unsure);
        let s = sniffed("1,2.5,2024-01-01\n2,3,2024-01-02\n").unwrap();
        assert!(!s.header && !s.header_unsure);
        let s = sniffed("a,b\nc,d\n").unwrap();
        assert!(s.header && s.header_unsure);
        // A file of one record: a row when it holds a number or a date.
        let s = sniffed("1,StreetA\n").unwrap();
        assert!(!s.header && !s.header_unsure);
        assert!(sniffed("id,street\n").unwrap().header);
        assert!(s.quote_unproven);
        assert!(!sniffed("\"a\",b\nc,d\n").unwrap().quote_unproven);
        // An apostrophe opening a field is text, not a quote left open.
        let s = sniffed("name;era\nx;'90s\ny;'80s\n").unwrap();
        assert_eq!(s.dialect, dialect(b';', Some(b'"')));
        // Given settings are kept.
        let s = sniff(
            b"1,2\n3,4\n",
            true,
            Dialect::default(),
            true,
            Sniff {
                header: false,
                ..ALL
            },
            0,
        )
        .unwrap();
        assert!(s.header);
    }

    #[test]
    fn only_whole_records_of_a_cut_sample_count() {
        let s = sniff(b"a;b\n1;2\n3;\"x", false, Dialect::default(), true, ALL, 0).unwrap();
        assert_eq!(s.dialect.delimiter, b';');
    }

    #[test]
    fn description() {
        let d = dialect(b';', Some(b'"'));
        assert_eq!(
            describe(&d, true, ALL, false, 0),
            "delimiter ';' (sniffed), quote '\"' (sniffed), header (sniffed)"
        );
        assert_eq!(
            describe(&dialect(b'|', None), false, Sniff::default(), true, 0),
            "delimiter '|', no quoting, no header, trailing delimiter"
        );
        assert_eq!(
            describe(&d, true, ALL, false, 3),
            "delimiter ';' (sniffed), quote '\"' (sniffed), header (sniffed), skipped 3 preamble lines (sniffed)"
        );
        let hash = Dialect {
            comment: Some(b'#'),
            ..d
        };
        assert_eq!(
            describe(&hash, true, Sniff::default(), false, 1),
            "delimiter ';', quote '\"', header, skipped 1 line, comment '#'"
        );
    }

    /// The lines sniffing skips as a preamble, or the hint it leaves.
    fn preamble(text: &str) -> (usize, Option<Hint>) {
        let s = sniffed(text).unwrap();
        assert_eq!(s.preamble, s.skip_rows > 0, "{text}");
        (s.skip_rows, s.hint)
    }

    #[test]
    fn csv_preamble_title_lines_are_detected() {
        for (text, lines) in [
            // DuckDB's data/csv/auto/skip_row.csv and multiple_skip_row.csv.
            ("some notes...\nnumber,text,date\n345.0,TEST3,2000-12-13\n", 1),
            (
                "some notes...\nmore notes,...\nnumber,text,date\n345.0,TEST4,2000-12-13\n",
                2,
            ),
            // A title with an open quote and blank lines around it.
            ("Report \"Q1\n\n\nid,amount\n1,2.5\n2,3\n", 3),
            // An export banner, tab-delimited (DuckDB's test_apple_financial).
            (
                "Vendor Name\tTest\nStart Date\t06/02/2024\nEnd Date\t06/29/2024\nDate\tSKU\tUnits\tPrice\n06/19/2024\tmonthly\t1\t99.99\n06/14/2024\tmonthly\t2\t99.99\n",
                3,
            ),
        ] {
            assert_eq!(preamble(text), (lines, None), "{text}");
            let s = sniffed(text).unwrap();
            assert!(s.header && !s.header_unsure, "{text}");
        }
        // The lines before the sample count too.
        let s = sniff(b"Title\na,b\n1,2\n", true, Dialect::default(), true, ALL, 2).unwrap();
        assert_eq!((s.skip_rows, s.preamble), (3, true));
    }

    #[test]
    fn a_comment_preamble_is_detected_without_a_header_to_prove_it() {
        assert_eq!(
            preamble("# A few comments\n# I'm a csv file\na;b\n1;3\n6;7\n"),
            (2, None)
        );
        assert_eq!(preamble("# exported by x\nx,y\nc,d\ne,f\n"), (1, None));
    }

    #[test]
    fn a_table_as_it_is_has_no_preamble() {
        for text in [
            "a,b\n1,2\n",
            // A first line that reads like the rest is part of the block,
            // even when it starts with '#' (a VCF-style header, a hex color).
            "#CHROM\tPOS\n1\t100\n",
            "#ff0000,red\n#00ff00,green\n",
            "Report, 2024\na,b\n1,2\n",
        ] {
            assert_eq!(preamble(text), (0, None), "{text}");
        }
    }

    #[test]
    fn rows_are_never_taken_for_a_preamble() {
        for text in [
            // A short row after the header: the header would be skipped.
            "id,name\n1,x\n2\n3,z\n4,w\n",
            // A header shorter than its rows: the block starts with a row.
            "id,name\n1,x,extra\n2,y,extra\n",
            // DuckDB's inconsistent_cells.csv: rows of every length.
            "One,two,three\n1,2,3,4\n1,2,3\n\n1,2,3,4,5\n1,2,3,4,5\n",
            // A multi-line quoted value whose inner lines look like a table.
            "note\n\"x\na,b\n1,2\n3,4\"\n",
            // A line with more fields than the block.
            "a,b,c,d\nx,y\n1,2\n3,4\n",
            // Rows with a trailing delimiter under a header without one
            // (DuckDB's bug_12596.csv): no preamble, and no hint either.
            "c1,c2\n1,2,\n3,4,\n",
        ] {
            let s = sniffed(text);
            assert!(
                s.as_ref().is_ok_and(|s| s.skip_rows == 0) || s.is_err(),
                "{text}: {s:?}"
            );
        }
        assert_eq!(sniffed("c1,c2\n1,2,\n3,4,\n").unwrap().hint, None);
    }

    #[test]
    fn unclear_preamble_names_skip_rows_in_the_hint() {
        // All text: no evidence that the block starts with a header.
        let (lines, hint) = preamble("Customers\nname,city\nAnn,Paris\nBob,Rome\n");
        assert_eq!(lines, 0);
        let h = hint.unwrap();
        assert_eq!((h.lines, h.skip, h.comment), (1, true, false));
        assert_eq!(
            as_flags(&h.words()),
            "the first line looks like a preamble (a title, notes or comments) before the header: if so, pass --skip-rows 1"
        );
        // Rows right after the preamble (DuckDB's 17738.csv): a hint only,
        // with --no-header.
        let (lines, hint) = preamble("some text\ndescription\n\nJohn,Doe,1\nJack,Roe,2\n");
        assert_eq!(lines, 0);
        let h = hint.unwrap();
        assert_eq!((h.lines, h.no_header), (3, true));
        assert!(
            as_flags(&h.words())
                .ends_with("before rows without a header: if so, pass --skip-rows 3 --no-header"),
            "{}",
            as_flags(&h.words())
        );
        // A header the user gives is no evidence of where it starts.
        let s = sniff(
            b"Customers\nname,city\nAnn,Paris\nBob,Rome\n",
            true,
            Dialect::default(),
            true,
            Sniff {
                header: false,
                ..ALL
            },
            0,
        )
        .unwrap();
        assert_eq!(s.skip_rows, 0);
        assert!(s.hint.is_some_and(|h| h.skip && h.lines == 1));
        // A sniff error carries the hint.
        let e = sniffed("Title\nid,note\nx,a;b|c\td\ny,z\n").unwrap_err();
        assert!(
            e.starts_with("no delimiter among") && e.ends_with("; the first line looks like a preamble (a title, notes or comments) before the header: if so, pass --skip-rows 1"),
            "{e}"
        );
    }

    #[test]
    fn comment_lines_in_the_data_name_the_comment_option() {
        // DuckDB's data/csv/comments/simple.csv: comments before and after the header.
        let text = "# A few comments\n# I'm a csv file\na;b\n# This is also a baddy\n1;3\n6;7\n";
        let (lines, hint) = preamble(text);
        assert_eq!(lines, 0);
        let h = hint.unwrap();
        assert_eq!((h.lines, h.skip, h.comment), (1, false, true));
        assert!(
            as_flags(&h.words()).contains("pass --comment '#'"),
            "{}",
            as_flags(&h.words())
        );
        // With the comment byte given, the same file reads as a table.
        let hash = Dialect {
            comment: Some(b'#'),
            ..Dialect::default()
        };
        let s = sniff(text.as_bytes(), true, hash, true, ALL, 0).unwrap();
        assert_eq!((s.dialect.delimiter, s.skip_rows, s.hint), (b';', 0, None));
        // A title and comments: both options.
        let h = preamble("Title\na;b\n# c\n1;3\n4;5\n").1.unwrap();
        assert_eq!((h.lines, h.skip, h.comment), (1, true, true));
        // A preamble before the header with the comment byte given (DuckDB's comment_skip.csv).
        let s = sniff(
            b"skip this line\n# comment\nx,y,z\n1,2,3\n4,5,6\n",
            true,
            hash,
            true,
            ALL,
            0,
        )
        .unwrap();
        assert_eq!((s.skip_rows, s.preamble), (2, true));
    }
}
