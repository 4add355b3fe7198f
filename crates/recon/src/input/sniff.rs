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

use super::csv_lex::{last_record_end, Dialect, Lexer, RecordBuf};
use super::parse;
pub use crate::config::Sniff;

/// The dialect a sample reads as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    pub dialect: Dialect,
    pub header: bool,
    /// The header choice rests on no evidence (every column is text).
    pub header_unsure: bool,
    /// The quote was chosen with no quoted field in the sample, where no
    /// quoting would have read it the same; a quoted field later is refused.
    pub quote_unproven: bool,
}

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

/// Sniffs what `sniff` leaves open from `sample`, the start of a file
/// (byte-order mark and blank lines before the header removed); `given` holds
/// the user's settings for the rest. `eof`: the sample is the whole file.
pub fn sniff(
    sample: &[u8],
    eof: bool,
    given: Dialect,
    given_header: bool,
    sniff: Sniff,
) -> Result<Sniffed, String> {
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
    // A quoted field the file never closes is a cut or broken file, not a
    // sign that quotes are plain data; and when nothing reads the sample,
    // reading it as given reports the first bad line.
    if unterminated {
        fits.retain(|r| r.dialect.quote.is_some());
    }
    if fits.is_empty() || (unterminated && sniff.quote) {
        return Ok(Sniffed {
            dialect: given,
            header: given_header,
            header_unsure: false,
            quote_unproven: false,
        });
    }
    let lexed = std::mem::take(&mut fits);
    let (mut fits, uneven): (Vec<Reading>, Vec<Reading>) =
        lexed.into_iter().partition(|r| r.columns.is_some());
    // The delimiter.
    let delimiter = if sniff.delimiter {
        let ragged = ragged(&uneven);
        let mut wide: Vec<(u8, usize)> = Vec::new();
        for r in &fits {
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
                    "no delimiter among ',' ';' '|' tab reads the first lines with the same number of fields on every line: pass --delimiter (and --quote) as the file is written".to_string(),
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
                    "the delimiter is ambiguous in the first lines: {} each read every line alike; pass --delimiter",
                    names.join(", ")
                ));
            }
        }
    } else {
        given.delimiter
    };
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
            "the first lines do not read alike with delimiter {} (uneven field counts, or a quote error with every quote recon knows): pass --delimiter and --quote (or --quote none) as the file is written",
            show(delimiter)
        ));
    }
    // The quote: one the sample uses, else '"' if it reads, else none.
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
                    "the quote is ambiguous in the first lines: fields are quoted with {}; pass --quote",
                    names.join(" and ")
                ));
            }
        }
    } else {
        given.quote
    };
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
    let (header, header_unsure) = if sniff.header {
        header_of(&chosen.records)
    } else {
        (given_header, false)
    };
    Ok(Sniffed {
        dialect: chosen.dialect,
        header,
        header_unsure,
        quote_unproven,
    })
}

/// The dialect in words, for the schema screen and the report.
pub fn describe(d: &Dialect, header: bool, sniff: Sniff, trailing: bool) -> String {
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
    if trailing {
        parts.push("trailing delimiter".to_string());
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Sniff = Sniff {
        delimiter: true,
        quote: true,
        escape: true,
        header: true,
    };

    fn sniffed(text: &str) -> Result<Sniffed, String> {
        sniff(text.as_bytes(), true, Dialect::default(), true, ALL)
    }

    fn dialect(delimiter: u8, quote: Option<u8>) -> Dialect {
        Dialect {
            delimiter,
            quote,
            escape: None,
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
        )
        .unwrap();
        assert!(s.header);
    }

    #[test]
    fn only_whole_records_of_a_cut_sample_count() {
        let s = sniff(b"a;b\n1;2\n3;\"x", false, Dialect::default(), true, ALL).unwrap();
        assert_eq!(s.dialect.delimiter, b';');
    }

    #[test]
    fn description() {
        let d = dialect(b';', Some(b'"'));
        assert_eq!(
            describe(&d, true, ALL, false),
            "delimiter ';' (sniffed), quote '\"' (sniffed), header (sniffed)"
        );
        assert_eq!(
            describe(&dialect(b'|', None), false, Sniff::default(), true),
            "delimiter '|', no quoting, no header, trailing delimiter"
        );
    }
}
