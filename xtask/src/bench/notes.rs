//! The hand-written notes of `docs/benchmarks.md`, and the guard that keeps
//! the generator from deleting hand edits.
//!
//! `docs/benchmarks.md` is the generator's output: the header and the
//! tables, then `## Notes` followed by `benches/NOTES.md` verbatim, the one
//! place where the notes are written. Right under `## Notes` the generator
//! leaves an HTML comment (invisible once rendered) that says which file to
//! edit and carries two checksums of what it wrote: the generated part above
//! the heading, and the notes below the comment.
//!
//! Before overwriting the file, [`check_overwrite`] compares them with the
//! file on disk. A file that still matches its checksums is the generator's
//! own output and may be replaced, whatever `benches/NOTES.md` says now
//! (editing the notes and running `cargo xtask bench --notes-only` is the
//! normal path). A file whose notes no longer match was edited by hand; it
//! is replaced only if its notes are exactly `benches/NOTES.md` (the edits
//! were moved there), otherwise the command refuses and lists the lines
//! that would be lost. An edit above the heading is refused too.
//!
//! Why a single source plus a guard, rather than the generated tables
//! between comment markers and the rest of the file preserved: with the
//! notes written only in `docs/benchmarks.md`, the file would be half
//! generated and half hand-written, and `benches/NOTES.md`, which other
//! code and docs point to, would go away; worse, text typed between the
//! markers would still be lost silently. With one source and a checksum,
//! hand edits anywhere are caught before anything is overwritten, the
//! notes have one home, and a unit test (`repo_notes_are_benches_notes`)
//! fails in CI as soon as the two files drift apart.

use std::collections::BTreeSet;

/// The single source of the notes, relative to the workspace root.
pub(crate) const NOTES_SOURCE: &str = "benches/NOTES.md";

/// The generated page, relative to the workspace root.
pub(crate) const REPORT: &str = "docs/benchmarks.md";

/// The heading line that starts the notes part.
const HEADING: &str = "## Notes";

/// The start of the comment under [`HEADING`].
const STAMP_START: &str = "<!-- Hand-written notes:";

/// FNV-1a, 64 bits: a checksum against accidental edits, not a security
/// measure.
fn fnv1a64(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The notes part: the heading, the comment with the checksums of `tables`
/// (everything the generator wrote above the heading) and of the notes,
/// then the notes.
pub(crate) fn render_notes(tables: &str, notes: &str) -> String {
    let notes = notes.trim();
    format!(
        "{HEADING}\n\n{STAMP_START} everything below this comment is {NOTES_SOURCE}, \
         copied verbatim by `cargo xtask bench`. Edit {NOTES_SOURCE}, not this file, \
         then run `cargo xtask bench --notes-only`; the command refuses to overwrite \
         hand edits made here. tables-fnv1a64={:016x} notes-fnv1a64={:016x} -->\n\n{notes}\n",
        fnv1a64(tables),
        fnv1a64(notes)
    )
}

/// The generated file's parts: (above the notes heading, the notes part
/// from the heading on), or `None` without a heading.
fn split(doc: &str) -> Option<(&str, &str)> {
    let mut at = 0;
    for line in doc.split_inclusive('\n') {
        if line.trim_end() == HEADING {
            return Some(doc.split_at(at));
        }
        at += line.len();
    }
    None
}

/// The checksums in a notes part's comment, and the notes below it.
struct Stamp<'a> {
    tables: Option<u64>,
    notes: Option<u64>,
    body: &'a str,
}

/// Reads the notes part (from the heading on). `None`: no comment, a file
/// from before the checksums.
fn read_stamp(part: &str) -> Option<Stamp<'_>> {
    let rest = part.strip_prefix(HEADING)?.trim_start();
    if !rest.starts_with(STAMP_START) {
        return None;
    }
    let end = rest.find("-->")?;
    let comment = &rest[..end];
    let field = |name: &str| {
        let i = comment.find(name)? + name.len();
        let hex: String = comment[i..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        u64::from_str_radix(&hex, 16).ok()
    };
    Some(Stamp {
        tables: field("tables-fnv1a64="),
        notes: field("notes-fnv1a64="),
        body: rest[end + 3..].trim(),
    })
}

/// `Ok` when `existing` (the current `docs/benchmarks.md`) may be replaced:
/// it is the generator's output as written, or its notes are exactly
/// `source` (the current `benches/NOTES.md`). Otherwise an error that says
/// what was edited and where to move it.
pub(crate) fn check_overwrite(existing: &str, source: &str) -> Result<(), String> {
    let Some((tables, part)) = split(existing) else {
        // No notes part: nothing hand-written after a notes heading.
        return Ok(());
    };
    let source = source.trim();
    let body = match read_stamp(part) {
        Some(stamp) => {
            if stamp.tables != Some(fnv1a64(tables)) {
                return Err(format!(
                    "{REPORT} was edited by hand above its `{HEADING}` heading (the \
                     header and tables no longer match the checksum the generator wrote \
                     under the heading), and regenerating would discard the edit. Move \
                     hand-written text into {NOTES_SOURCE}, then rerun; `--force` \
                     overwrites and discards it."
                ));
            }
            if stamp.notes == Some(fnv1a64(stamp.body)) {
                return Ok(());
            }
            stamp.body
        }
        // A file written before the checksums: its notes must be the source.
        None => part[HEADING.len()..].trim(),
    };
    if body == source {
        return Ok(());
    }
    let known: BTreeSet<&str> = source.lines().map(str::trim_end).collect();
    let lost: Vec<&str> = body
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !known.contains(l))
        .collect();
    let detail = if lost.is_empty() {
        format!("no line is missing from {NOTES_SOURCE}: lines were deleted or moved")
    } else {
        let shown: Vec<String> = lost.iter().take(8).map(|l| format!("  {l}")).collect();
        format!(
            "{} line(s) of {REPORT} are not in {NOTES_SOURCE}, the first:\n{}",
            lost.len(),
            shown.join("\n")
        )
    };
    Err(format!(
        "{REPORT} was edited by hand after its `{HEADING}` heading, and regenerating \
         it would delete those edits. The notes are generated from {NOTES_SOURCE}: move \
         the edits there (`diff {NOTES_SOURCE} <(sed '1,/^{HEADING}$/d' {REPORT})` shows \
         them, with the generator's comment), then rerun; `--force` overwrites and \
         discards them. {detail}"
    ))
}

/// `existing` with its notes part replaced by `notes` (none when `None`),
/// the part above the heading kept byte for byte.
pub(crate) fn splice_notes(existing: &str, notes: Option<&str>) -> String {
    let tables = split(existing).map_or(existing, |(t, _)| t);
    let mut out = tables.to_string();
    if let Some(notes) = notes {
        out.push_str(&render_notes(tables, notes));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLES: &str =
        "# Benchmarks\n\nGenerated.\n\n## Results\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n";
    const NOTES: &str = "## First\n\nSome text.\n\n### Second\n\nMore text.\n";

    fn generated(notes: &str) -> String {
        format!("{TABLES}{}", render_notes(TABLES, notes))
    }

    #[test]
    fn the_generators_output_may_be_replaced_whatever_the_notes_say_now() {
        let doc = generated(NOTES);
        assert_eq!(check_overwrite(&doc, NOTES), Ok(()));
        // benches/NOTES.md edited since: the normal path.
        assert_eq!(check_overwrite(&doc, "## First\n\nOther text.\n"), Ok(()));
        assert_eq!(check_overwrite(&doc, ""), Ok(()));
    }

    #[test]
    fn notes_edited_in_the_report_are_refused_with_the_lines_that_would_be_lost() {
        let doc =
            generated(NOTES).replace("More text.", "More text.\n\n## Added by hand\n\n42 ns.");
        let err = check_overwrite(&doc, NOTES).unwrap_err();
        assert!(err.contains(NOTES_SOURCE), "{err}");
        assert!(err.contains("--force"), "{err}");
        assert!(err.contains("## Added by hand"), "{err}");
        assert!(err.contains("42 ns."), "{err}");
        assert!(err.contains("2 line(s)"), "{err}");
        // A deletion loses nothing of the source's lines, and is still refused.
        let doc = generated(NOTES).replace("Some text.\n", "");
        let err = check_overwrite(&doc, NOTES).unwrap_err();
        assert!(err.contains("deleted or moved"), "{err}");
    }

    #[test]
    fn edits_moved_into_the_source_let_the_report_be_replaced() {
        let edited = NOTES.replace("More text.", "More text, edited.");
        let doc = generated(NOTES).replace("More text.", "More text, edited.");
        assert!(check_overwrite(&doc, NOTES).is_err());
        assert_eq!(check_overwrite(&doc, &edited), Ok(()));
    }

    #[test]
    fn an_edit_above_the_notes_is_refused() {
        let doc = generated(NOTES).replace("| 1 | 2 |", "| 1 | 3 |");
        let err = check_overwrite(&doc, NOTES).unwrap_err();
        assert!(err.contains("above its `## Notes` heading"), "{err}");
    }

    #[test]
    fn a_report_from_before_the_checksums_must_hold_the_source() {
        let old = format!("{TABLES}## Notes\n\n{NOTES}");
        assert_eq!(check_overwrite(&old, NOTES), Ok(()));
        let err = check_overwrite(&old, "## First\n\nSome text.\n").unwrap_err();
        assert!(err.contains("### Second"), "{err}");
        // No notes heading at all: nothing to lose after it.
        assert_eq!(check_overwrite(TABLES, NOTES), Ok(()));
    }

    #[test]
    fn splicing_keeps_the_tables_and_renders_the_notes() {
        let doc = generated(NOTES);
        let new = splice_notes(&doc, Some("## Only\n\nThis.\n"));
        assert!(new.starts_with(TABLES));
        assert_eq!(new, generated("## Only\n\nThis.\n"));
        assert!(new.ends_with("\n\n## Only\n\nThis.\n"));
        assert_eq!(check_overwrite(&new, "anything"), Ok(()));
        assert_eq!(splice_notes(&doc, None), TABLES);
        // A report without notes gains them after its tables.
        assert_eq!(splice_notes(TABLES, Some(NOTES)), generated(NOTES));
    }

    #[test]
    fn the_comment_says_which_file_to_edit() {
        let part = render_notes(TABLES, NOTES);
        let first = part.lines().nth(2).unwrap();
        assert!(
            first.starts_with("<!-- ") && first.ends_with(" -->"),
            "{first}"
        );
        assert!(
            first.contains("Edit benches/NOTES.md, not this file"),
            "{first}"
        );
        assert!(first.contains("cargo xtask bench --notes-only"), "{first}");
    }

    /// The repository's `docs/benchmarks.md` holds `benches/NOTES.md` as
    /// its notes, exactly as `cargo xtask bench --notes-only` writes them,
    /// under the header the generator writes: the two cannot drift apart.
    #[test]
    fn repo_notes_are_benches_notes() {
        let root = crate::root();
        let doc = std::fs::read_to_string(root.join(REPORT)).unwrap();
        let source = std::fs::read_to_string(root.join(NOTES_SOURCE)).unwrap();
        let hint = format!(
            "{REPORT} does not hold {NOTES_SOURCE} as its notes: edit {NOTES_SOURCE} \
             (not {REPORT}) and run `cargo xtask bench --notes-only`"
        );
        assert_eq!(check_overwrite(&doc, &source), Ok(()), "{hint}");
        assert!(doc == splice_notes(&doc, Some(&source)), "{hint}");
        let header =
            |vs_torch| format!("# Benchmarks\n\n{}", super::super::report::header(vs_torch));
        assert!(
            doc.starts_with(&header(true)) || doc.starts_with(&header(false)),
            "{REPORT}'s header is not the generator's"
        );
    }
}
