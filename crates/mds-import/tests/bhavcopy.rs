//! NSE's daily price files as the repository carries them (`data/prices/`:
//! the last year of the symbol-keyed archive and 2025-01-01..2025-03-07 of
//! the ISIN-keyed one), read from the archives as `mds import
//! nse-bhavcopy` reads them: counts per format, hand-checked bars, the
//! format's quirks, refusals with their line; and the whole archives in
//! `../shared/data/prices` (when that folder is there) compared where they
//! overlap.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use mds_domain::prices::{Bar, IsinSource};
use mds_import::bhavcopy::{BhavRow, DayFile, Format, archive, check, parse_day};

fn repo_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/prices")
}

const SYMBOL_KEYED: &str = "nse_sec_bhavdata_full_2025-08-21_2026-08-21.tar.zst";
const ISIN_KEYED: &str = "nse_udiff_2025-01-01_2025-03-07.tar.zst";

/// Every day file of `path`, read.
fn days(path: &Path) -> Vec<DayFile> {
    let mut out = Vec::new();
    archive::for_each_file(&[path], &mut |name, bytes| {
        out.push(parse_day(name, bytes)?);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// The raw bytes of one member of an archive.
fn member(path: &Path, suffix: &str) -> Vec<u8> {
    let mut found = None;
    archive::for_each_file(&[path], &mut |name, bytes| {
        if name.ends_with(suffix) {
            found = Some(bytes.to_vec());
        }
        Ok(())
    })
    .unwrap();
    found.unwrap_or_else(|| panic!("no member {suffix} in {}", path.display()))
}

fn date(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

fn row<'a>(days: &'a [DayFile], day: &str, symbol: &str) -> &'a BhavRow {
    let d = days.iter().find(|d| d.date == date(day)).unwrap_or_else(|| panic!("no file of {day}"));
    d.rows.iter().find(|r| r.symbol.as_str() == symbol).unwrap_or_else(|| panic!("no {symbol} on {day}"))
}

#[test]
fn the_symbol_keyed_year_counts_and_a_hand_checked_bar() {
    let days = days(&repo_data().join(SYMBOL_KEYED));
    // Counted with awk on the unpacked files: 248 files of EQ rows only.
    assert_eq!(days.len(), 248);
    assert!(days.iter().all(|d| d.format == Format::SecBhavdataFull && d.skipped.total() == 0));
    assert_eq!(days.iter().map(|d| d.rows.len()).sum::<usize>(), 589_055);
    let dates: Vec<NaiveDate> = days.iter().map(|d| d.date).collect();
    assert_eq!((dates[0], dates[dates.len() - 1]), (date("2025-08-21"), date("2026-08-21")));

    // BAJFINANCE, EQ, 21-Aug-2026,1095.0,1105.4,1105.5,1090.6,1095.0,1095.0,1095.69,3042594,33337.32,94415, 1878096, 61.73
    // (padded cells: " EQ", " 21-Aug-2026", " 1878096", " 61.73"), line 271.
    let r = row(&days, "2026-08-21", "BAJFINANCE");
    assert_eq!((r.line, r.series.as_str(), r.isin.as_ref()), (271, "EQ", None));
    let isin = mds_domain::Isin::parse("INE296A01032").unwrap();
    let bar = Bar::published(r.date, isin, r.series, IsinSource::Symbol, &r.figures);
    assert_eq!(
        serde_json::to_value(&bar).unwrap(),
        serde_json::json!({"date": "2026-08-21", "isin": "INE296A01032", "series": "EQ", "open": 1105.4,
            "high": 1105.5, "low": 1090.6, "close": 1095.0, "last": 1095.0, "prev_close": 1095.0,
            "volume": 3042594, "turnover": 3333732000.0, "trades": 94415, "delivery_qty": 1878096,
            "delivery_pct": 61.73, "isin_source": "symbol"})
    );
    // TTL, EQ, 21-Aug-2026,6.22,6.33,6.69,6.1,6.49,6.25,6.3,774049,48.78,436, 627297, 81.04
    let t = row(&days, "2026-08-21", "TTL");
    assert_eq!((t.figures.close.to_string(), t.figures.last.unwrap().to_string()), ("6.25".into(), "6.49".into()));
    assert_eq!(t.figures.turnover.to_string(), "4878000.00");
}

#[test]
fn the_isin_keyed_span_counts_and_the_split_changes_ttls_isin() {
    let days = days(&repo_data().join(ISIN_KEYED));
    // awk: 141,108 rows in 48 files; 128,432 of equity series, of which
    // 10,914 are funds' (INF ISINs); 12,676 of other series.
    assert_eq!(days.len(), 48);
    assert!(days.iter().all(|d| d.format == Format::Udiff));
    let equity: usize = days.iter().map(|d| d.rows.len()).sum();
    let funds: u64 = days.iter().map(|d| d.skipped.funds).sum();
    let other: u64 = days.iter().map(|d| d.skipped.by_series.values().sum::<u64>()).sum();
    assert_eq!((equity, funds, other), (117_518, 10_914, 12_676));
    let series: HashSet<&str> = days.iter().flat_map(|d| d.skipped.by_series.keys().map(|s| s.as_str())).collect();
    assert!(["GB", "GS", "TB", "BL", "N1", "T0", "E1", "RR"].iter().all(|s| series.contains(s)), "{series:?}");
    assert!(days.iter().flat_map(|d| &d.rows).all(|r| r.series.is_equity() && r.isin.is_some()));

    // TTL's face-value split, ex 2025-02-12: the same symbol, a new ISIN.
    // 2025-02-11,...,INE592B01016,TTL,BE,...,153.80,153.80,144.50,145.29,144.50,151.63,,145.35,,,18578,2715965.42,463,...
    let before = row(&days, "2025-02-11", "TTL");
    assert_eq!(before.isin.as_ref().unwrap().as_str(), "INE592B01016");
    assert_eq!(before.series.as_str(), "BE");
    let f = &before.figures;
    assert_eq!(
        [f.open, f.high, f.low, f.close, f.last.unwrap(), f.prev_close].map(|p| p.to_string()),
        ["153.80", "153.80", "144.50", "145.29", "144.50", "151.63"]
    );
    assert_eq!((f.volume, f.turnover.to_string(), f.trades), (18578, "2715965.42".into(), 463));
    assert_eq!((f.delivery_qty, f.delivery_pct), (None, None));
    let after = row(&days, "2025-02-12", "TTL");
    assert_eq!(after.isin.as_ref().unwrap().as_str(), "INE592B01024");
    assert_eq!(
        (after.line, after.figures.close.to_string(), after.figures.prev_close.to_string()),
        (2128, "14.01".into(), "145.29".into())
    );
}

#[test]
fn the_old_udiff_header_with_its_trailing_comma_reads_the_same_rows() {
    let bytes = member(&repo_data().join(ISIN_KEYED), "nse-cm-bhavcopy-2025-02-12.csv");
    let text = String::from_utf8(bytes.clone()).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    assert!(header.ends_with("Rsvd1,Rsvd2,Rsvd3,Rsvd4"), "{header}");
    let old = format!("{},\n{rest}", header.replace("Rsvd", "Rsvd0"));
    let new = parse_day("new", &bytes).unwrap();
    let old = parse_day("old", old.as_bytes()).unwrap();
    assert_eq!(old, new);
    assert_eq!(new.rows.len() as u64 + new.skipped.total(), 2934);
}

#[test]
fn dashes_and_empty_cells_are_none_where_a_file_may_leave_them() {
    let bytes = member(&repo_data().join(SYMBOL_KEYED), "sec_bhavdata_full_2026-08-21.csv");
    let text = String::from_utf8(bytes).unwrap();
    let edited = text.replace(
        "TTL, EQ, 21-Aug-2026,6.22,6.33,6.69,6.1,6.49,6.25,6.3,774049,48.78,436, 627297, 81.04",
        "TTL, EQ, 21-Aug-2026,6.22,6.33,6.69,6.1, - ,6.25,6.3,774049,48.78,436, -, -",
    );
    assert_ne!(edited, text);
    let day = parse_day("edited", edited.as_bytes()).unwrap();
    let t = day.rows.iter().find(|r| r.symbol.as_str() == "TTL").unwrap();
    assert_eq!((t.figures.last, t.figures.delivery_qty, t.figures.delivery_pct), (None, None, None));
    assert_eq!(t.figures.close.to_string(), "6.25");
}

#[test]
fn a_malformed_line_is_refused_with_its_file_and_line() {
    let bytes = member(&repo_data().join(SYMBOL_KEYED), "sec_bhavdata_full_2026-08-21.csv");
    let text = String::from_utf8(bytes).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[270] = lines[270].replace("1105.4", "11O5.4"); // line 271: BAJFINANCE
    lines[99] = lines[99].rsplitn(3, ',').nth(2).unwrap().to_owned(); // line 100: two cells short
    let e = parse_day("day.csv", lines.join("\n").as_bytes()).unwrap_err().to_string();
    assert_eq!(
        e,
        "day.csv: line 100: expected 15 cells, one per header column, but found 13\n\
         day.csv: line 271: OPEN_PRICE: must be a number such as 176.25 (got \"11O5.4\")"
    );
    // A header without a column read, or of neither format.
    let e = parse_day("x.csv", b"TradDt,TckrSymb\n2025-01-01,A\n").unwrap_err().to_string();
    assert!(e.starts_with("x.csv: line 1: required column \"SctySrs\" is missing"), "{e}");
    let e = parse_day("x.csv", b"Date,Close\n").unwrap_err().to_string();
    assert!(e.starts_with("x.csv: not an NSE daily file"), "{e}");
}

/// A folder holding a plain file, a `.zst`, a `.zip` (a daily file and a
/// note) and a README: the daily files are read in name order, each with
/// its archive's name, and the rest ignored; a file named on its own is
/// read whatever its name.
#[test]
fn every_kind_of_path_is_read_as_a_stream_of_files() {
    use std::io::Write;
    let day = member(&repo_data().join(ISIN_KEYED), "nse-cm-bhavcopy-2025-02-12.csv");
    let dir = std::env::temp_dir().join(format!("mds-bhavcopy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("a.csv"), &day).unwrap();
    std::fs::write(dir.join("b/day.csv.zst"), zstd::encode_all(&day[..], 3).unwrap()).unwrap();
    std::fs::write(dir.join("README.md"), "not a daily file").unwrap();
    let mut zip = zip::ZipWriter::new(std::fs::File::create(dir.join("c.zip")).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("BhavCopy_NSE_CM_0_0_0_20250212_F_0000.csv", options).unwrap();
    zip.write_all(&day).unwrap();
    zip.start_file("note.txt", options).unwrap();
    zip.write_all(b"ignored").unwrap();
    zip.finish().unwrap();
    std::fs::write(dir.join("named.txt"), &day).unwrap();

    let mut seen = Vec::new();
    let files = archive::for_each_file(&[dir.clone(), dir.join("named.txt")], &mut |name, bytes| {
        let parsed = parse_day(name, bytes)?;
        seen.push((name.strip_prefix(dir.to_str().unwrap()).unwrap().to_owned(), parsed.rows.len()));
        Ok(())
    })
    .unwrap();
    let rows = parse_day("day", &day).unwrap().rows.len();
    let expected: Vec<(String, usize)> =
        ["/a.csv", "/b/day.csv.zst", "/c.zip:BhavCopy_NSE_CM_0_0_0_20250212_F_0000.csv", "/named.txt"]
            .iter()
            .map(|n| ((*n).to_owned(), rows))
            .collect();
    assert_eq!((files, seen), (4, expected));

    // An error stops the walk and names the member.
    std::fs::write(dir.join("a.csv"), b"TradDt,TckrSymb\n").unwrap();
    let e = archive::for_each_file(&[&dir], &mut |name, bytes| parse_day(name, bytes).map(drop)).unwrap_err();
    assert!(e.to_string().contains("a.csv: line 1: required column \"SctySrs\" is missing from the header"), "{e}");
    let e = archive::for_each_file(&[dir.join("absent.tar.zst")], &mut |_, _| Ok(())).unwrap_err();
    assert!(e.to_string().contains("absent.tar.zst: No such file"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `../shared/data/prices`, beside the repository, when it is there.
fn shared_data() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/prices");
    if dir.join("nse_udiff_2024-01-01_2025-03-07.tar.zst").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent (the whole archives are not in the repository)", dir.display());
        None
    }
}

/// The whole archives where they overlap (2024-01-01..2025-03-07): every
/// EQ row of one is the other's, figure for figure (turnover within its
/// rounding to a hundredth of a lakh); the symbol-keyed rows with no
/// ISIN-keyed partner are the funds UDiFF names by their `INF` ISINs. And
/// two hand-checked closes beyond the repository's span.
#[test]
fn the_whole_archives_agree_on_every_overlapping_row() {
    let Some(dir) = shared_data() else { return };
    let mut isin_keyed: BTreeMap<NaiveDate, DayFile> = BTreeMap::new();
    archive::for_each_file(&[dir.join("nse_udiff_2024-01-01_2025-03-07.tar.zst")], &mut |name, bytes| {
        let mut day = parse_day(name, bytes)?;
        day.rows.retain(|r| r.series.as_str() == "EQ");
        isin_keyed.insert(day.date, day);
        Ok(())
    })
    .unwrap();
    assert_eq!(isin_keyed.len(), 297);
    let (mut paired, mut days, mut bajfinance) = (0, 0, 0);
    archive::for_each_file(&[dir.join("nse_sec_bhavdata_full_2024-01-01_2026-08-21.tar.zst")], &mut |name, bytes| {
        let day = parse_day(name, bytes)?;
        // BAJFINANCE's split and bonus, ex 2025-06-16 (the shared README).
        for (on, close) in [("2025-06-13", "9331.00"), ("2025-06-16", "938.00")] {
            if day.date == date(on) {
                let r = day.rows.iter().find(|r| r.symbol.as_str() == "BAJFINANCE").unwrap();
                assert_eq!(r.figures.close.to_string(), close, "{on}");
                bajfinance += 1;
            }
        }
        let Some(other) = isin_keyed.get(&day.date) else { return Ok(()) };
        let c = check::compare(&other.rows, &day.rows);
        assert_eq!(c.disagreements, [], "{name}");
        assert_eq!(c.only_isin_keyed, 0, "{name}");
        let eq_funds = other.skipped.funds; // every fund row of the day is EQ (checked below)
        assert_eq!(c.only_symbol_keyed as u64, eq_funds, "{name}");
        paired += c.paired;
        days += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(days, 297, "every UDiFF day has its symbol-keyed file");
    assert_eq!(bajfinance, 2);
    eprintln!("{paired} rows paired over {days} days, all agreeing");
    assert!(paired > 500_000, "{paired}");
}

/// Bytes the binary carries (the demo's archives, `demo::PRICES`) read as
/// the files of their names: the embedded ISIN-keyed archive gives the days
/// its file on disk gives, and an embedded `.zip`, `.zst` and `.csv` their
/// one day each.
#[test]
fn embedded_archives_read_as_their_files_do() {
    use std::io::Write;

    use mds_import::bhavcopy::DayFiles;
    use mds_import::format::Source;

    let on_disk = days(&repo_data().join(ISIN_KEYED));
    let embedded = mds_import::demo::PRICES.iter().find(|s| s.name() == ISIN_KEYED).expect("embedded").clone();
    let mut read = Vec::new();
    let files = DayFiles::new(vec![embedded])
        .for_each_day(&mut |name, day| {
            assert!(name.starts_with(&format!("{ISIN_KEYED}:udiff/")), "{name}");
            read.push(day);
            Ok(())
        })
        .unwrap();
    assert_eq!((files, read), (48, on_disk));

    let day = member(&repo_data().join(ISIN_KEYED), "nse-cm-bhavcopy-2025-02-12.csv");
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file("BhavCopy_NSE_CM_0_0_0_20250212_F_0000.csv", zip::write::SimpleFileOptions::default()).unwrap();
    zip.write_all(&day).unwrap();
    let zip = zip.finish().unwrap().into_inner();
    let leak = |b: Vec<u8>| -> &'static [u8] { Box::leak(b.into_boxed_slice()) };
    let sources = vec![
        Source::Embedded { name: "day.zip", bytes: leak(zip) },
        Source::Embedded { name: "day.csv.zst", bytes: leak(zstd::encode_all(&day[..], 3).unwrap()) },
        Source::Embedded { name: "day.csv", bytes: leak(day.clone()) },
    ];
    let rows = parse_day("day", &day).unwrap().rows;
    let mut seen = Vec::new();
    DayFiles::new(sources)
        .for_each_day(&mut |name, d| {
            assert_eq!(d.rows, rows, "{name}");
            seen.push(name.to_owned());
            Ok(())
        })
        .unwrap();
    assert_eq!(seen, ["day.zip:BhavCopy_NSE_CM_0_0_0_20250212_F_0000.csv", "day.csv.zst", "day.csv"]);
}
