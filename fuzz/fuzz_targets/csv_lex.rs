//! The CSV tokenizer on arbitrary bytes and dialects: never panics, and the
//! record boundary the reader thread cuts at is always one the lexer sees,
//! comment lines included.
#![no_main]
use libfuzzer_sys::fuzz_target;
use recon::internals::csv_lex::{last_record_end, Dialect, Lexer, RecordBuf};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let pick = |b: u8, set: &[u8]| set[b as usize % set.len()];
    let d = Dialect {
        delimiter: pick(data[0], b",;\t|"),
        quote: [Some(b'"'), Some(b'\''), None][data[1] as usize % 3],
        escape: [None, Some(b'\\')][data[2] as usize % 2],
        comment: [None, Some(b'#')][data[2] as usize / 2 % 2],
    };
    let buf = &data[3..];
    let mut starts = Vec::new();
    let mut lex = Lexer::new(buf, d);
    let mut rec = RecordBuf::default();
    let mut ok = true;
    loop {
        match lex.next_record(&mut rec) {
            Ok(Some(s)) => {
                assert!(s <= buf.len());
                starts.push(s);
                for i in 0..rec.len() {
                    assert!(rec.field(i).is_some());
                }
            }
            Ok(None) => break,
            Err(e) => {
                assert!(e.offset <= buf.len());
                ok = false;
                break;
            }
        }
    }
    if let Some(end) = last_record_end(buf, &d) {
        assert!(end <= buf.len());
        // When the whole buffer lexes cleanly, a cut point starts a record (or ends the buffer).
        if ok && end < buf.len() {
            // (or of a comment line, which the lexer skips before the next one).
            assert!(
                starts.contains(&end) || d.comment == buf.get(end).copied(),
                "cut at {end} is not a record start: {starts:?}"
            );
        }
    }
});
