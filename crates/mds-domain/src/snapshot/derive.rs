//! The identity events and statuses made of exchange snapshots (as runs)
//! and NSE's change files (contract section 10.1). Pure: the same inputs
//! give the same events whatever order they were imported in.
//!
//! The rules:
//! - **`isin_changed`**: in one series, an ISIN gone at a snapshot (no run
//!   of it starts where its last one ends) whose last symbol, followed
//!   through the symbol-change rows dated since that run began, is the
//!   symbol of an ISIN new at that snapshot with the same first 7
//!   characters (country and issuer). Observed (`exact: false`), dated by
//!   the snapshot, face values from the two runs, under both ISINs. The new
//!   ISIN gets no `listed` event of its own. A new issuer's ISIN under an
//!   old name is a new listing.
//! - **`listed` / `delisted`**, per ISIN and exchange (NSE's two series
//!   together, so a move between main board and SME is neither): the start
//!   and end of each span the exchange's series show it. The first span's
//!   `listed` is exact when the list gives a date of listing not after the
//!   first snapshot showing it; otherwise the snapshot's day, observed. No
//!   `delisted` where an `isin_changed` replaced it.
//! - **`symbol_changed`**: two consecutive runs of a series with different
//!   symbols. When a chain of symbol-change rows leads from the old symbol
//!   to the new one, dated after the old run began and not after the new
//!   one, each row is an exact event (one event per change, the file's
//!   date); otherwise one observed event on the later snapshot's day. A
//!   security first shown under a symbol it got by a change after its date
//!   of listing (the file says so) is listed under the old symbol and gets
//!   the change's exact event ("linked when a snapshot shows it").
//! - **`name_changed`**: likewise with the name-change rows (names compared
//!   ignoring case, spaces and a trailing full stop); only from the series
//!   that names the company: NSE's when it has any NSE run, else BSE's
//!   (the two spell names differently).
//! - **Status**: `superseded` when it is the old ISIN of an
//!   `isin_changed`; else `active` when the latest snapshot of some series
//!   shows it; else `delisted`.
//! - **Listings** (section 10.3): per ISIN and exchange, whether the
//!   latest snapshot of one of the exchange's series shows it (else its
//!   listing is `delisted`, whatever another exchange says), and its
//!   `last_seen`, the day of the latest snapshot that showed it (the
//!   snapshots' days given to [`Deriver::with_days`]; without them, the
//!   first day of its latest run).
//!
//! Events of an ISIN are ordered by date, then in the order they are made
//! here (listed, then changes, then `isin_changed`, then `delisted`).

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::NaiveDate;

use super::daily::Daily;
use super::{ListingSeen, NameChange, Run, Series, SnapshotRow, SymbolChange};
use crate::company::{Exchange, Ticker};
use crate::identity::{CompanyStatus, IdentityChange, IdentityEvent};
use crate::isin::Isin;

/// The events and statuses of every ISIN some snapshot has shown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Derived {
    /// Each ISIN's events, oldest first (an `isin_changed` under both).
    pub events: BTreeMap<Isin, Vec<IdentityEvent>>,
    /// Each ISIN's status.
    pub status: HashMap<Isin, CompanyStatus>,
    /// Each ISIN's listings as the snapshots leave them, one per exchange
    /// (NSE first).
    pub listings: HashMap<Isin, Vec<ListingSeen>>,
    /// The ISINs only NSE's daily files showed (no list did), each with
    /// the symbol it last traded under: companies to make.
    pub daily_only: BTreeMap<Isin, Ticker>,
    /// The old ISINs whose symbol or name changes a file dates after their
    /// exact ISIN change (those are the successor's), each with what it
    /// was on its last day: the `from` of the first of them.
    pub last_day: HashMap<Isin, LastDay>,
}

/// What an old ISIN was called on its last day, where no event of its own
/// says so (see [`Derived::last_day`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LastDay {
    /// Its symbol on each exchange whose symbol changed after it.
    pub symbols: Vec<(Exchange, Ticker)>,
    /// Its name, when the name changed after it.
    pub name: Option<String>,
}

impl Derived {
    /// Every event as `(ISIN, event)`, grouped by ISIN (ascending), each
    /// ISIN's oldest first: the order of `IdentityStore::identity_events`.
    pub fn flat(&self) -> Vec<(Isin, IdentityEvent)> {
        self.events.iter().flat_map(|(i, es)| es.iter().map(move |e| (i.clone(), e.clone()))).collect()
    }
}

/// A name as compared with the change file's: upper case, runs of white
/// space as one space, no trailing full stop.
fn fold_name(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ").to_uppercase();
    s.trim_end_matches('.').to_owned()
}

/// A found link in a change file: `(from, to, date)` per row, in order.
type Path<T> = Vec<(T, T, NaiveDate)>;

/// Row numbers sorted by a hash of a folded key, to find the rows whose
/// key folds to a value without holding a folded string per row (a
/// million-company import's change files hold about 285,000 rows). A hash
/// shared by two keys only makes a candidate the caller's check refuses.
struct KeyIndex {
    /// `(hash, row)`, sorted.
    entries: Vec<(u64, u32)>,
    hash: fn(&str) -> u64,
}

impl KeyIndex {
    /// Indexes `keys`, the folded key of each row in row order, by
    /// `hash`; a key's rows are found in row order.
    fn new(keys: impl Iterator<Item = String>, hash: fn(&str) -> u64) -> Self {
        let mut entries: Vec<(u64, u32)> =
            keys.enumerate().map(|(i, k)| (hash(&k), u32::try_from(i).expect("fewer than 2^32 rows"))).collect();
        entries.sort_unstable();
        KeyIndex { entries, hash }
    }

    /// The rows whose key may fold to `folded`, in row order.
    fn candidates(&self, folded: &str) -> impl Iterator<Item = usize> + '_ {
        let h = (self.hash)(folded);
        let at = self.entries.partition_point(|e| e.0 < h);
        self.entries[at..].iter().take_while(move |e| e.0 == h).map(|e| e.1 as usize)
    }
}

/// The hash [`KeyIndex`] sorts by (SipHash with fixed keys: the same in
/// every run).
fn key_hash(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// The change rows, borrowed, by their old and new value (folded), for
/// following chains.
struct Chains<'c, T> {
    /// `(from, to, date)`, by `(date, from, to)`.
    rows: Vec<(&'c T, &'c T, NaiveDate)>,
    by_from: KeyIndex,
    by_to: KeyIndex,
    fold: fn(&T) -> String,
}

impl<'c, T: Clone + Ord> Chains<'c, T> {
    fn new(rows: impl Iterator<Item = (&'c T, &'c T, NaiveDate)>, fold: fn(&T) -> String) -> Self {
        Self::hashed(rows, fold, key_hash)
    }

    /// [`Chains::new`] with the keys hashed by `hash`.
    fn hashed(
        rows: impl Iterator<Item = (&'c T, &'c T, NaiveDate)>,
        fold: fn(&T) -> String,
        hash: fn(&str) -> u64,
    ) -> Self {
        let mut rows: Vec<(&'c T, &'c T, NaiveDate)> = rows.filter(|(f, t, _)| fold(f) != fold(t)).collect();
        rows.sort_by(|a, b| (a.2, a.0, a.1).cmp(&(b.2, b.0, b.1)));
        let by_from = KeyIndex::new(rows.iter().map(|r| fold(r.0)), hash);
        let by_to = KeyIndex::new(rows.iter().map(|r| fold(r.1)), hash);
        Chains { rows, by_from, by_to, fold }
    }

    /// The rows whose old value folds to `folded`, by `(date, from, to)`.
    fn with_from<'a>(&'a self, folded: &'a str) -> impl Iterator<Item = (&'c T, &'c T, NaiveDate)> + 'a {
        self.by_from.candidates(folded).map(|i| self.rows[i]).filter(move |r| (self.fold)(r.0) == folded)
    }

    /// The rows whose new value folds to `folded`, by `(date, from, to)`.
    fn with_to<'a>(&'a self, folded: &'a str) -> impl Iterator<Item = (&'c T, &'c T, NaiveDate)> + 'a {
        self.by_to.candidates(folded).map(|i| self.rows[i]).filter(move |r| (self.fold)(r.1) == folded)
    }

    /// A chain of rows from `from` to `to`, dates not decreasing, all in
    /// `(after, until]`; the shortest such, earliest first.
    fn path(&self, from: &T, to: &T, after: NaiveDate, until: NaiveDate) -> Option<Path<T>> {
        let target = (self.fold)(to);
        let mut frontier: Vec<(String, NaiveDate, Path<T>)> = vec![((self.fold)(from), after, Vec::new())];
        for _ in 0..6 {
            let mut next = Vec::new();
            for (at, since, path) in &frontier {
                for (f, t, d) in self.with_from(at) {
                    if d <= after || d > until || d < *since {
                        continue;
                    }
                    let mut p = path.clone();
                    p.push((f.clone(), t.clone(), d));
                    if (self.fold)(t) == target {
                        return Some(p);
                    }
                    if p.len() < 6 {
                        next.push(((self.fold)(t), d, p));
                    }
                }
            }
            if next.is_empty() {
                return None;
            }
            frontier = next;
        }
        None
    }

    /// Every value reachable from `from` by rows dated in `(after, until]`.
    fn reachable(&self, from: &T, after: NaiveDate, until: NaiveDate) -> Vec<T> {
        let mut seen: HashSet<String> = HashSet::from([(self.fold)(from)]);
        let mut out = vec![from.clone()];
        let mut i = 0;
        while i < out.len() && out.len() < 16 {
            let at = (self.fold)(&out[i]);
            for (_, t, d) in self.with_from(&at) {
                if d > after && d <= until && seen.insert((self.fold)(t)) {
                    out.push(t.clone());
                }
            }
            i += 1;
        }
        out
    }

    /// The rows that led to `value` after `after` and not after `until`,
    /// followed back (the latest row first, then the one before it, …),
    /// returned oldest first; `accept` may refuse a row.
    fn back(&self, value: &T, after: NaiveDate, until: NaiveDate, accept: impl Fn(&T) -> bool) -> Path<T> {
        let mut out: Path<T> = Vec::new();
        let mut at = (self.fold)(value);
        let mut until = until;
        let mut seen: HashSet<String> = HashSet::from([at.clone()]);
        while out.len() < 6 {
            let row = self
                .with_to(&at)
                .filter(|(f, _, d)| *d > after && *d <= until && accept(f) && !seen.contains(&(self.fold)(f)))
                .max_by_key(|r| r.2);
            let Some((f, t, d)) = row else { break };
            out.push((f.clone(), t.clone(), d));
            at = (self.fold)(f);
            seen.insert(at.clone());
            until = d;
        }
        out.reverse();
        out
    }
}

/// The symbols joined by symbol-change rows, as groups (union-find).
struct SymbolGroups {
    index: HashMap<Ticker, usize>,
    parent: Vec<usize>,
}

impl SymbolGroups {
    fn new(rows: &[SymbolChange]) -> Self {
        let mut g = SymbolGroups { index: HashMap::new(), parent: Vec::new() };
        for r in rows {
            let (a, b) = (g.id(&r.from), g.id(&r.to));
            let (a, b) = (g.root(a), g.root(b));
            g.parent[a.max(b)] = a.min(b);
        }
        g
    }

    fn id(&mut self, t: &Ticker) -> usize {
        let n = self.parent.len();
        let id = *self.index.entry(t.clone()).or_insert(n);
        if id == n {
            self.parent.push(n);
        }
        id
    }

    fn root(&self, mut i: usize) -> usize {
        while self.parent[i] != i {
            i = self.parent[i];
        }
        i
    }

    /// The group of `t`, `None` for a symbol no row names.
    fn of(&self, t: &Ticker) -> Option<usize> {
        self.index.get(t).map(|i| self.root(*i))
    }

    /// Whether `t` is one of `carried` or in the group of one of them.
    fn joins(&self, carried: &HashSet<&Ticker>, t: &Ticker) -> bool {
        carried.contains(t) || self.of(t).is_some_and(|g| carried.iter().any(|c| self.of(c) == Some(g)))
    }
}

/// An ISIN's runs in one series, by `since`.
type SeriesRuns<'a> = BTreeMap<(Series, &'a Isin), Vec<&'a Run>>;

/// Blocks of consecutive runs (each starting where the one before ended):
/// `(start, end)` indexes into the runs, inclusive.
fn blocks(runs: &[&Run]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=runs.len() {
        if i == runs.len() || runs[i - 1].until != Some(runs[i].since) {
            out.push((start, i - 1));
            start = i;
        }
    }
    out
}

/// A span an ISIN is on an exchange: its start, its end (`None` while
/// listed), and its first and last runs.
type Span<'a> = (NaiveDate, Option<NaiveDate>, &'a Run, &'a Run);

/// A successor found: in `series`, `from` was replaced by `to` on `date`.
struct Succession<'a> {
    series: Series,
    from: &'a Run,
    to: &'a Run,
    date: NaiveDate,
}

/// Finds the `isin_changed` successions of every series.
fn successions<'a>(by: &SeriesRuns<'a>, symbols: &Chains<Ticker>) -> Vec<Succession<'a>> {
    // Per series and day: the ISINs gone then (last run of a block) and
    // the ISINs new then (first run of a block), by symbol.
    let mut gone: BTreeMap<(Series, NaiveDate), Vec<&Run>> = BTreeMap::new();
    let mut new: HashMap<(Series, NaiveDate), HashMap<&Ticker, Vec<&Run>>> = HashMap::new();
    for ((series, _), runs) in by {
        for (s, e) in blocks(runs) {
            if let Some(u) = runs[e].until {
                gone.entry((*series, u)).or_default().push(runs[e]);
            }
            new.entry((*series, runs[s].since)).or_default().entry(&runs[s].row.symbol).or_default().push(runs[s]);
        }
    }
    let mut out = Vec::new();
    let mut taken: HashSet<&Isin> = HashSet::new();
    for ((series, date), olds) in &gone {
        let Some(news) = new.get(&(*series, *date)) else { continue };
        for old in olds {
            let candidates = symbols.reachable(&old.row.symbol, old.since, *date);
            let found = candidates.iter().flat_map(|s| news.get(s).into_iter().flatten()).find(|n| {
                n.row.isin != old.row.isin
                    && n.row.isin.as_str()[..7] == old.row.isin.as_str()[..7]
                    && !taken.contains(&n.row.isin)
            });
            if let Some(n) = found {
                taken.insert(&n.row.isin);
                out.push(Succession { series: *series, from: old, to: n, date: *date });
            }
        }
    }
    out
}

/// The links of rule h of 10.3: for each split or consolidation of an
/// ISIN among `by`'s, the one other ISIN of its issuer, shown by no series
/// that shows it, whose face value is the action's other one (the `from`
/// of the action on the old ISIN, the `to` on the new), or the ISIN the
/// action names; `(old, new, isin_changed, ex-date)`, each pair once, none
/// where an old ISIN is already replaced or a new one already made by
/// `pairs` (the snapshots' successions).
fn split_links<'a>(
    prep: &'a Deriver<'_>,
    by: &SeriesRuns<'a>,
    pairs: &HashSet<(&'a Isin, &'a Isin)>,
) -> Vec<(&'a Isin, &'a Isin, IdentityChange, NaiveDate)> {
    // Per ISIN: the series that show it, its latest face value.
    let mut facts: BTreeMap<&Isin, (Vec<Series>, Option<f64>, NaiveDate)> = BTreeMap::new();
    for ((series, isin), rs) in by {
        let f = facts.entry(*isin).or_insert((Vec::new(), None, NaiveDate::MIN));
        f.0.push(*series);
        if let Some(last) = rs.last().filter(|r| r.since >= f.2) {
            f.1 = last.row.face_value;
            f.2 = last.since;
        }
    }
    let same = |a: Option<f64>, b: Option<f64>| matches!((a, b), (Some(x), Some(y)) if (x - y).abs() < 1e-9);
    let mut out: Vec<(&Isin, &Isin, IdentityChange, NaiveDate)> = Vec::new();
    for a in &prep.splits {
        let Some((&x, (xs, xf, _))) = facts.get_key_value(&a.isin) else { continue };
        let (from, to) = (a.face_value_from, a.face_value_to);
        let found: Vec<(&Isin, &Isin)> = facts
            .iter()
            .filter(|(y, (ys, _, _))| issuer(y) == issuer(x) && **y != x && !ys.iter().any(|s| xs.contains(s)))
            .filter_map(|(&y, (_, yf, _))| match &a.new_isin {
                Some(n) if n == y => Some((x, y)),
                Some(_) => None,
                None if same(*xf, from) && same(*yf, to) && !same(from, to) => Some((x, y)),
                None if same(*xf, to) && same(*yf, from) && !same(from, to) => Some((y, x)),
                None => None,
            })
            .collect();
        let [(old, new)] = found.as_slice() else { continue };
        let (old, new) = (*old, *new);
        let taken =
            pairs.iter().any(|(o, n)| *o == old || *n == new) || out.iter().any(|(o, n, _, _)| *o == old || *n == new);
        if taken {
            continue;
        }
        let change = IdentityChange::IsinChanged {
            from: old.clone(),
            to: new.clone(),
            face_value_from: facts[old].1,
            face_value_to: facts[new].1,
        };
        out.push((old, new, change, a.ex_date));
    }
    out
}

/// The events of ISINs, as they are made.
#[derive(Default)]
struct Events(BTreeMap<Isin, Vec<IdentityEvent>>);

impl Events {
    /// Adds an event of `isin`: exact, or observed on `date` with `seen`
    /// the last day a snapshot showed the state before (its
    /// `observed_between`).
    fn push(&mut self, isin: &Isin, date: NaiveDate, exact: bool, seen: Option<NaiveDate>, change: IdentityChange) {
        let e = if exact { IdentityEvent::exact(date, change) } else { IdentityEvent::observed(date, seen, change) };
        self.0.entry(isin.clone()).or_default().push(e);
    }

    /// The symbol changes from `old` to `new` on `isin` seen at `date`: the
    /// change file's rows when a chain of them dated in `(after, date]`
    /// leads there, else one event: exact on `dated` (the first day the
    /// daily files show the new symbol), else observed.
    #[allow(clippy::too_many_arguments)]
    fn symbol_change(
        &mut self,
        symbols: &Chains<Ticker>,
        isin: &Isin,
        exchange: Exchange,
        old: &Ticker,
        new: &Ticker,
        after: NaiveDate,
        (seen, date, dated): (Option<NaiveDate>, NaiveDate, Option<NaiveDate>),
    ) {
        let path = match exchange {
            Exchange::Nse => symbols.path(old, new, after, date),
            Exchange::Bse => None,
        };
        match (path, dated) {
            (Some(p), _) => {
                for (from, to, d) in p {
                    self.push(isin, d, true, None, IdentityChange::SymbolChanged { exchange, from, to });
                }
            }
            // The first day the daily files show the new symbol.
            (None, Some(d)) => self.push(
                isin,
                d,
                true,
                None,
                IdentityChange::SymbolChanged { exchange, from: old.clone(), to: new.clone() },
            ),
            (None, None) => self.push(
                isin,
                date,
                false,
                seen,
                IdentityChange::SymbolChanged { exchange, from: old.clone(), to: new.clone() },
            ),
        }
    }

    /// Moves to `to` the exact events of `from` made since its `start`th
    /// that are dated after `day`: a symbol or name change a change file
    /// dates after an exact ISIN change happened under the successor.
    /// What `from` was called before them, when any moved.
    fn move_after(&mut self, from: &Isin, start: usize, day: NaiveDate, to: &Isin) -> Option<LastDay> {
        let list = self.0.get_mut(from)?;
        let (mut kept, mut moved) = (Vec::new(), Vec::new());
        for e in list.drain(start..) {
            if e.exact && e.date > day { moved.push(e) } else { kept.push(e) }
        }
        list.extend(kept);
        if moved.is_empty() {
            return None;
        }
        moved.sort_by_key(|e| e.date);
        let mut last = LastDay::default();
        for e in &moved {
            match &e.change {
                IdentityChange::SymbolChanged { exchange, from, .. }
                    if !last.symbols.iter().any(|(x, _)| x == exchange) =>
                {
                    last.symbols.push((*exchange, from.clone()));
                }
                IdentityChange::NameChanged { from, .. } => {
                    last.name.get_or_insert_with(|| from.clone());
                }
                _ => {}
            }
        }
        self.0.entry(to.clone()).or_default().extend(moved);
        Some(last)
    }

    /// An `isin_changed` from `from` to `to` (their face values `faces`),
    /// under both: exact on `dated`, else observed on `date` with `seen`.
    /// Exact, it takes `from`'s exact changes made since its `start`th and
    /// dated after it ([`Events::move_after`]): what `from` was called
    /// before them, when any moved.
    fn isin_change(
        &mut self,
        from: &Isin,
        to: &Isin,
        faces: (Option<f64>, Option<f64>),
        start: usize,
        (seen, date, dated): (Option<NaiveDate>, NaiveDate, Option<NaiveDate>),
    ) -> Option<LastDay> {
        let change = IdentityChange::IsinChanged {
            from: from.clone(),
            to: to.clone(),
            face_value_from: faces.0,
            face_value_to: faces.1,
        };
        let (date, exact) = dated.map_or((date, false), |d| (d, true));
        let last = exact.then(|| self.move_after(from, start, date, to)).flatten();
        self.push(from, date, exact, seen, change.clone());
        self.push(to, date, exact, seen, change);
        last
    }

    /// How many events `isin` has so far.
    fn count(&self, isin: &Isin) -> usize {
        self.0.get(isin).map_or(0, Vec::len)
    }

    /// The name changes from `old` to `new` on `isin` seen at `date`, as
    /// [`Events::symbol_change`] with the name-change rows; the names of the
    /// snapshots stand at the ends of a chain.
    fn name_change(
        &mut self,
        names: &Chains<String>,
        isin: &Isin,
        old: &str,
        new: &str,
        after: NaiveDate,
        (seen, date): (Option<NaiveDate>, NaiveDate),
    ) {
        match names.path(&old.to_owned(), &new.to_owned(), after, date) {
            Some(p) => {
                let n = p.len();
                for (k, (from, to, d)) in p.into_iter().enumerate() {
                    let from = if k == 0 { old.to_owned() } else { from };
                    let to = if k + 1 == n { new.to_owned() } else { to };
                    self.push(isin, d, true, None, IdentityChange::NameChanged { from, to });
                }
            }
            None => {
                self.push(isin, date, false, seen, IdentityChange::NameChanged { from: old.into(), to: new.into() })
            }
        }
    }
}

/// The issuer of an ISIN (its first 7 characters: country and issuer),
/// the part of the derivation one ISIN's events depend on: an ISIN's
/// events and status are made of its own runs, the change files' rows and
/// the runs of the other ISINs of its issuer (the successor candidates of
/// an `isin_changed`). So [`Deriver::derive`] of the runs of some whole
/// issuers gives for their ISINs what [`derive`] of every run gives; the
/// store derives an import's events an issuer range at a time.
pub fn issuer(isin: &Isin) -> &str {
    &isin.as_str()[..7]
}

/// The change files' rows prepared for deriving (their chains, the groups
/// of symbols they join), to derive the events of many sets of runs
/// ([`Deriver::derive`]) against the same rows.
pub struct Deriver<'c> {
    symbol_chains: Chains<'c, Ticker>,
    name_chains: Chains<'c, String>,
    /// The name-change rows, by their new name (folded).
    names: &'c [NameChange],
    name_symbols: KeyIndex,
    groups: SymbolGroups,
    /// The days of the snapshots of each series, ascending.
    days: HashMap<Series, Vec<NaiveDate>>,
    /// The splits and consolidations of the action files, by ISIN.
    splits: Vec<SplitAction>,
    /// NSE's ISIN-keyed daily files (14.1), folded.
    daily: Daily,
}

/// A split or consolidation an exchange's corporate-action file published
/// (contract 13), as the derivation reads it: what dates an `isin_changed`
/// exactly and links an old ISIN to its successor across exchanges (10.3).
#[derive(Debug, Clone, PartialEq)]
pub struct SplitAction {
    /// The ISIN the action was resolved to.
    pub isin: Isin,
    /// Its ex-date.
    pub ex_date: NaiveDate,
    /// Face value before, INR, when the text gives it.
    pub face_value_from: Option<f64>,
    /// Face value after, INR, when the text gives it.
    pub face_value_to: Option<f64>,
    /// The successor ISIN, when the action names it.
    pub new_isin: Option<Isin>,
}

/// A change some other file than the lists dates exactly: the hook by
/// which a source such as NSE's daily price files (an ISIN first traded on
/// day D, contract 14.1) would date an `isin_changed` that the snapshots
/// only bound. [`Deriver::split_between`] is the corporate actions' answer;
/// another source answers the same question for its own days.
pub trait DatesChange {
    /// The exact day `old` became `new` within `(seen, observed]`, if known.
    fn isin_change_day(&self, old: &Isin, new: &Isin, seen: NaiveDate, observed: NaiveDate) -> Option<NaiveDate>;
}

impl DatesChange for [SplitAction] {
    fn isin_change_day(&self, old: &Isin, new: &Isin, seen: NaiveDate, observed: NaiveDate) -> Option<NaiveDate> {
        let of = |isin: &Isin| {
            let at = self.partition_point(|a| a.isin < *isin);
            let end = at + self[at..].partition_point(|a| a.isin == *isin);
            &self[at..end]
        };
        of(old)
            .iter()
            .chain(of(new))
            .filter(|a| a.ex_date > seen && a.ex_date <= observed)
            .filter(|a| a.new_isin.as_ref().is_none_or(|n| n == new))
            .map(|a| a.ex_date)
            .min()
    }
}

impl<'c> Deriver<'c> {
    /// Prepares the change files' `symbols` and `names` rows.
    pub fn new(symbols: &'c [SymbolChange], names: &'c [NameChange]) -> Self {
        let symbol_chains =
            Chains::new(symbols.iter().map(|s| (&s.from, &s.to, s.date)), |t: &Ticker| t.as_str().to_owned());
        let name_chains = Chains::new(names.iter().map(|n| (&n.from, &n.to, n.date)), |s: &String| fold_name(s));
        let name_symbols = KeyIndex::new(names.iter().map(|n| fold_name(&n.to)), key_hash);
        // Every symbol an ISIN carried on NSE, as the groups of symbols the
        // symbol-change rows join (for linking name-change rows, which name
        // the symbol of the day the file was made).
        let groups = SymbolGroups::new(symbols);
        Deriver {
            symbol_chains,
            name_chains,
            names,
            name_symbols,
            groups,
            days: HashMap::new(),
            splits: Vec::new(),
            daily: Daily::default(),
        }
    }

    /// The splits and consolidations the action files hold (any order).
    pub fn with_splits(mut self, splits: Vec<SplitAction>) -> Self {
        self.splits = splits;
        self.splits.sort_by(|a, b| (&a.isin, a.ex_date).cmp(&(&b.isin, b.ex_date)));
        self
    }

    /// What NSE's ISIN-keyed daily files showed ([`Daily`]): ISINs only
    /// they show become known, and they date what the lists only bound.
    pub fn with_daily(mut self, daily: Daily) -> Self {
        self.daily = daily;
        self
    }

    /// The first day the daily files show `isin` (under `symbol` when
    /// given) within `(seen, observed]`, when a file before it did not:
    /// the exact day of a change the lists only bound.
    fn daily_day(
        &self,
        isin: &Isin,
        symbol: Option<&Ticker>,
        seen: Option<NaiveDate>,
        observed: NaiveDate,
    ) -> Option<NaiveDate> {
        let first = match symbol {
            Some(s) => self.daily.first_under(isin, s)?,
            None => self.daily.first_of(isin)?,
        };
        (self.daily.dates(first) && seen.is_none_or(|s| first > s) && first <= observed).then_some(first)
    }

    /// The day of the last snapshot of `series` before `day`, if any: the
    /// last day a security first shown on `day` was seen absent.
    fn day_before(&self, series: Series, day: NaiveDate) -> Option<NaiveDate> {
        let days = self.days.get(&series)?;
        days[..days.partition_point(|d| *d < day)].last().copied()
    }

    /// The ex-date of a split or consolidation of `old` or `new` within
    /// `(seen, observed]` (the earliest), which dates `old`'s change to
    /// `new` exactly; `None` when no action does.
    pub fn split_between(&self, old: &Isin, new: &Isin, seen: NaiveDate, observed: NaiveDate) -> Option<NaiveDate> {
        self.splits.as_slice().isin_change_day(old, new, seen, observed)
    }

    /// The days of the snapshots imported (`(series, day)`, any order), by
    /// which each listing's `last_seen` is found.
    pub fn with_days(mut self, days: &[(Series, NaiveDate)]) -> Self {
        self.days.clear();
        for (series, d) in days {
            self.days.entry(*series).or_default().push(*d);
        }
        for v in self.days.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        self
    }

    /// The day of the latest snapshot of `r`'s series that showed it: the
    /// series' latest while `r` is open, else the latest before its end
    /// (`r.since` when the days are not known).
    fn last_seen(&self, r: &Run) -> NaiveDate {
        let days = self.days.get(&r.series).map(Vec::as_slice).unwrap_or_default();
        let before = match r.until {
            None => days.len(),
            Some(u) => days.partition_point(|d| *d < u),
        };
        days[..before].last().copied().filter(|d| *d >= r.since).unwrap_or(r.since)
    }

    /// The events and statuses made of `runs` and the prepared rows (see
    /// the module's rules): those of every ISIN `runs` show, complete for
    /// the ISINs whose issuer's runs ([`issuer`]) are all in `runs`.
    pub fn derive(&self, runs: &[Run]) -> Derived {
        derive_with(self, runs, None)
    }

    /// [`Deriver::derive`] of the runs of the issuers from `lo` to (not
    /// including) `hi` (to the last when `None`): the daily files' ISINs
    /// of that range only are derived with them.
    pub fn derive_range(&self, runs: &[Run], lo: &str, hi: Option<&str>) -> Derived {
        derive_with(self, runs, Some((lo, hi)))
    }
}

/// The events and statuses made of `runs` and the change files'
/// `symbols` and `names` rows (see the module's rules).
pub fn derive(runs: &[Run], symbols: &[SymbolChange], names: &[NameChange]) -> Derived {
    Deriver::new(symbols, names).derive(runs)
}

/// A daily succession (see [`super::daily`]): `old` last traded on a day
/// before `date`, the first day `new` traded (or, for a `new` no daily
/// file shows, the ex-date of the split that made it).
struct DailySuccession<'a> {
    old: &'a Isin,
    new: &'a Isin,
    old_symbol: &'a Ticker,
    new_symbol: &'a Ticker,
    last: NaiveDate,
    date: NaiveDate,
}

/// The daily successions among `daily`'s ISINs, none of an old ISIN the
/// lists replace or a new one they make (`pairs`), none to an ISIN a list
/// showed before its first day. An old ISIN no list shows, still traded
/// in the last daily file, goes on to the one ISIN of its issuer that no
/// daily file
/// shows, first shown by a list after that file under a symbol the old
/// one's reaches, when a split or consolidation of either (`splits`)
/// going ex between them dates it (AGIIL: INE976R01025, first traded on
/// 2025-02-07, to INE976R01033 on its split of 2025-10-10).
fn daily_successions<'a>(
    daily: &'a Daily,
    listed_since: &HashMap<&'a Isin, RunFacts<'a>>,
    pairs: &HashSet<(&Isin, &Isin)>,
    symbols: &Chains<Ticker>,
    splits: &[SplitAction],
) -> Vec<DailySuccession<'a>> {
    // Per ISIN: first day, its symbol then; last day, its symbol then.
    let mut facts: BTreeMap<&Isin, (NaiveDate, &Ticker, NaiveDate, &Ticker)> = BTreeMap::new();
    for p in &daily.pairs {
        let f = facts.entry(&p.isin).or_insert((p.first, &p.symbol, p.last, &p.symbol));
        if p.first < f.0 {
            (f.0, f.1) = (p.first, &p.symbol);
        }
        if p.last > f.2 {
            (f.2, f.3) = (p.last, &p.symbol);
        }
    }
    // The ISINs of each issuer (contiguous in ISIN order).
    let mut issuers: BTreeMap<&str, Vec<&Isin>> = BTreeMap::new();
    for isin in facts.keys() {
        issuers.entry(issuer(isin)).or_default().push(isin);
    }
    // The lists' ISINs of each issuer.
    let mut listed: HashMap<&str, Vec<&Isin>> = HashMap::new();
    for isin in listed_since.keys() {
        listed.entry(issuer(isin)).or_default().push(isin);
    }
    let mut out: Vec<DailySuccession> = Vec::new();
    let mut taken: HashSet<&Isin> = pairs.iter().map(|(_, n)| *n).collect();
    let replaced: HashSet<&Isin> = pairs.iter().map(|(o, _)| *o).collect();
    for (&old, &(_, _, last, old_symbol)) in &facts {
        if replaced.contains(old) {
            continue;
        }
        let reach = symbols.reachable(old_symbol, last, NaiveDate::MAX);
        if daily.days.last().is_some_and(|d| *d <= last) {
            // Still traded in the last file: a list's ISIN a split made.
            // (An ISIN a list shows is rule h's: split_links.)
            if listed_since.contains_key(old) {
                continue;
            }
            let found: Vec<(&Isin, &Ticker, NaiveDate)> = listed
                .get(issuer(old))
                .into_iter()
                .flatten()
                .map(|y| (*y, &listed_since[*y]))
                .filter(|(y, r)| r.since > last && !facts.contains_key(*y) && !taken.contains(*y))
                .filter(|(_, r)| r.nse_symbol.is_some_and(|s| reach.contains(s)))
                .filter_map(|(y, r)| Some((y, r.nse_symbol?, splits.isin_change_day(old, y, last, r.since)?)))
                .collect();
            if let [(new, new_symbol, date)] = found[..] {
                taken.insert(new);
                out.push(DailySuccession { old, new, old_symbol, new_symbol, last, date });
            }
            continue;
        }
        let same = &issuers[issuer(old)];
        if same.len() < 2 {
            continue;
        }
        let found = same
            .iter()
            .map(|y| (*y, facts[*y]))
            .filter(|(y, f)| *y != old && f.0 > last && !taken.contains(*y))
            .filter(|(y, f)| reach.contains(f.1) && listed_since.get(*y).is_none_or(|r| r.since > last))
            .min_by_key(|(y, f)| (f.0, *y));
        if let Some((new, (date, new_symbol, _, _))) = found {
            taken.insert(new);
            out.push(DailySuccession { old, new, old_symbol, new_symbol, last, date });
        }
    }
    out
}

/// The ISIN the daily files show between a pair of the lists, `old` and
/// its successor `new` (`seen` the last day a list showed `old`,
/// `observed` the first it showed `new`): the one ISIN of their issuer
/// that no list shows, first traded after `seen` and after `old`'s last
/// trade, last traded before `observed` and before `new`'s first trade,
/// under symbols `old`'s reach and that reach `new`'s. Its first and last
/// days of trading. (VERTOZ: INE188Y01015 to INE188Y01023 on its split of
/// 2024-07-05, to INE188Y01031 on its consolidation of 2025-06-25; the
/// lists show only the ends.)
fn daily_between<'a>(
    daily: &'a Daily,
    lists: &HashMap<&Isin, RunFacts>,
    symbols: &Chains<Ticker>,
    (old, new): (&SnapshotRow, &SnapshotRow),
    seen: NaiveDate,
    observed: NaiveDate,
) -> Option<(&'a Isin, NaiveDate, NaiveDate)> {
    let of = issuer(&old.isin);
    let at = daily.pairs.partition_point(|p| p.isin.as_str() < of);
    let after_old = daily.last_of(&old.isin).map_or(seen, |l| l.max(seen));
    let before_new = daily.first_of(&new.isin).map_or(observed, |f| f.min(observed));
    let reach = symbols.reachable(&old.symbol, seen, observed);
    let mut found: Option<(&Isin, NaiveDate, NaiveDate)> = None;
    let mut rest = &daily.pairs[at..];
    while let Some(p) = rest.first().filter(|p| issuer(&p.isin) == of) {
        let ps = daily.of(&p.isin);
        rest = &rest[ps.len()..];
        let (first, last) = (ps[0].first, ps.iter().map(|p| p.last).max().expect("an ISIN has a pair"));
        let last_symbol = &ps.iter().max_by_key(|p| p.last).expect("an ISIN has a pair").symbol;
        let fits = !lists.contains_key(&p.isin)
            && first > after_old
            && last < before_new
            && ps.iter().all(|p| reach.contains(&p.symbol))
            && symbols.reachable(last_symbol, last, observed).contains(&new.symbol);
        if fits && found.replace((&p.isin, first, last)).is_some() {
            return None;
        }
    }
    found
}

/// What the derivation of the daily files needs of an ISIN's runs: the
/// first day a list showed it, its latest face value and its latest NSE
/// symbol.
struct RunFacts<'a> {
    since: NaiveDate,
    latest: NaiveDate,
    face_value: Option<f64>,
    nse_symbol: Option<&'a Ticker>,
}

/// [`RunFacts`] of every ISIN `by` shows.
fn run_facts<'a>(by: &SeriesRuns<'a>) -> HashMap<&'a Isin, RunFacts<'a>> {
    let mut out: HashMap<&Isin, RunFacts> = HashMap::new();
    let mut nse_latest: HashMap<&Isin, NaiveDate> = HashMap::new();
    for ((series, isin), rs) in by {
        let (Some(first), Some(last)) = (rs.first(), rs.last()) else { continue };
        let f = out.entry(*isin).or_insert(RunFacts {
            since: first.since,
            latest: last.since,
            face_value: last.row.face_value,
            nse_symbol: None,
        });
        f.since = f.since.min(first.since);
        if last.since > f.latest {
            f.latest = last.since;
            f.face_value = last.row.face_value;
        }
        if series.exchange() == Exchange::Nse && nse_latest.get(isin).is_none_or(|d| last.since > *d) {
            nse_latest.insert(isin, last.since);
            f.nse_symbol = Some(&last.row.symbol);
        }
    }
    out
}

/// [`Deriver::derive`], of the daily files' ISINs of `range` (all when
/// `None`).
fn derive_with(prep: &Deriver<'_>, runs: &[Run], range: Option<(&str, Option<&str>)>) -> Derived {
    let Deriver { symbol_chains, name_chains, names, name_symbols, groups, days: _, splits: _, daily: _ } = prep;
    let daily_here;
    let daily = match range {
        Some((lo, hi)) => {
            daily_here = prep.daily.range(lo, hi);
            &daily_here
        }
        None => &prep.daily,
    };
    let mut by: SeriesRuns = BTreeMap::new();
    for r in runs {
        by.entry((r.series, &r.row.isin)).or_default().push(r);
    }
    for v in by.values_mut() {
        v.sort_by_key(|r| r.since);
    }
    let on_nse: HashSet<&Isin> =
        runs.iter().filter(|r| r.series.exchange() == Exchange::Nse).map(|r| &r.row.isin).collect();
    let mut nse_symbols: HashMap<&Isin, HashSet<&Ticker>> = HashMap::new();
    for r in runs.iter().filter(|r| r.series.exchange() == Exchange::Nse) {
        nse_symbols.entry(&r.row.isin).or_default().insert(&r.row.symbol);
    }

    let succ = successions(&by, symbol_chains);
    // (series, ISIN, day): replaced then / made then.
    let replaced: HashSet<(Exchange, &Isin, NaiveDate)> =
        succ.iter().map(|s| (s.series.exchange(), &s.from.row.isin, s.date)).collect();
    let made: HashSet<(Exchange, &Isin, NaiveDate)> =
        succ.iter().map(|s| (s.series.exchange(), &s.to.row.isin, s.date)).collect();
    let snapshot_pairs: HashSet<(&Isin, &Isin)> = succ.iter().map(|s| (&s.from.row.isin, &s.to.row.isin)).collect();
    let facts = run_facts(&by);
    let dsucc = daily_successions(daily, &facts, &snapshot_pairs, symbol_chains, &prep.splits);
    // Made by a daily succession: no NSE listing of their own; replaced by
    // one: no delisting after their last trade.
    let made_daily: HashSet<&Isin> = dsucc.iter().map(|d| d.new).collect();
    let replaced_daily: HashMap<&Isin, NaiveDate> = dsucc.iter().map(|d| (d.old, d.last)).collect();

    let mut ev = Events::default();

    // Listed and delisted: spans per ISIN and exchange.
    let mut spans: BTreeMap<(&Isin, Exchange), Vec<Span>> = BTreeMap::new();
    for ((series, isin), rs) in &by {
        for (s, e) in blocks(rs) {
            spans.entry((isin, series.exchange())).or_default().push((rs[s].since, rs[e].until, rs[s], rs[e]));
        }
    }
    for ((isin, exchange), mut list) in spans {
        list.sort_by_key(|s| s.0);
        // Merge spans that touch or overlap (NSE main board and SME).
        let mut merged: Vec<Span> = Vec::new();
        for s in list {
            match merged.last_mut() {
                Some(m) if m.1.is_none_or(|end| s.0 <= end) => {
                    m.1 = match (m.1, s.1) {
                        (None, _) | (_, None) => None,
                        (Some(a), Some(b)) => Some(a.max(b)),
                    };
                    if m.1 == s.1 {
                        m.3 = s.3;
                    }
                }
                _ => merged.push(s),
            }
        }
        for (k, (start, end, first, last)) in merged.into_iter().enumerate() {
            let made_by_daily = k == 0 && exchange == Exchange::Nse && made_daily.contains(isin);
            if !made.contains(&(exchange, isin, start)) && !made_by_daily {
                let exact_day = first.row.listed_on.filter(|d| k == 0 && *d <= start);
                // The first day NSE's daily files show it, inside the bound.
                let daily_day = (k == 0 && exchange == Exchange::Nse)
                    .then(|| prep.daily_day(isin, None, prep.day_before(first.series, start), start))
                    .flatten();
                let (day, exact) = match (exact_day, daily_day) {
                    (Some(d), _) | (None, Some(d)) => (d, true),
                    (None, None) => (start, false),
                };
                let mut symbol = first.row.symbol.clone();
                if exact && exchange == Exchange::Nse {
                    let back = symbol_chains.back(&symbol, day, start, |_| true);
                    if let Some((f, _, _)) = back.first() {
                        symbol = f.clone();
                    }
                    ev.push(isin, day, true, None, IdentityChange::Listed { exchange, symbol });
                    for (from, to, d) in back {
                        ev.push(isin, d, true, None, IdentityChange::SymbolChanged { exchange, from, to });
                    }
                } else {
                    let before = prep.day_before(first.series, day);
                    ev.push(isin, day, exact, before, IdentityChange::Listed { exchange, symbol });
                }
                // The names it had before the first snapshot showing it.
                if exact && exchange == Exchange::Nse && first.series.exchange() == Exchange::Nse {
                    let carried = nse_symbols.get(isin);
                    let back = name_chains.back(&first.row.name, day, start, |_| true);
                    let linked = back.iter().all(|(_, to, d)| {
                        let to = fold_name(to);
                        name_symbols.candidates(&to).map(|i| &names[i]).any(|n| {
                            n.date == *d
                                && fold_name(&n.to) == to
                                && carried.is_some_and(|c| groups.joins(c, &n.symbol))
                        })
                    });
                    if linked {
                        let n = back.len();
                        for (j, (from, to, d)) in back.into_iter().enumerate() {
                            let to = if j + 1 == n { first.row.name.clone() } else { to };
                            ev.push(isin, d, true, None, IdentityChange::NameChanged { from, to });
                        }
                    }
                }
            }
            if let Some(u) = end {
                let after_trades = replaced_daily.get(isin).is_some_and(|l| *l < u);
                if !replaced.contains(&(exchange, isin, u)) && !after_trades {
                    let seen = Some(prep.last_seen(last));
                    ev.push(
                        isin,
                        u,
                        false,
                        seen,
                        IdentityChange::Delisted { exchange, symbol: last.row.symbol.clone() },
                    );
                }
            }
        }
    }

    // Symbol and name changes between consecutive runs.
    for ((series, isin), rs) in &by {
        let names_here = series.exchange() == Exchange::Nse || !on_nse.contains(isin);
        for w in rs.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a.until != Some(b.since) {
                continue;
            }
            if a.row.symbol != b.row.symbol {
                let seen = prep.last_seen(a);
                let dated = (series.exchange() == Exchange::Nse)
                    .then(|| prep.daily_day(isin, Some(&b.row.symbol), Some(seen), b.since))
                    .flatten();
                ev.symbol_change(
                    symbol_chains,
                    isin,
                    series.exchange(),
                    &a.row.symbol,
                    &b.row.symbol,
                    a.since,
                    (Some(seen), b.since, dated),
                );
            }
            if names_here && fold_name(&a.row.name) != fold_name(&b.row.name) {
                let seen = (Some(prep.last_seen(a)), b.since);
                ev.name_change(name_chains, isin, &a.row.name, &b.row.name, a.since, seen);
            } else if names_here && a.row.name != b.row.name {
                // Only the spelling changed: still a change of the name shown.
                ev.push(
                    isin,
                    b.since,
                    false,
                    Some(prep.last_seen(a)),
                    IdentityChange::NameChanged { from: a.row.name.clone(), to: b.row.name.clone() },
                );
            }
        }
    }

    // ISIN changes, under both ISINs; a symbol or name changed with the ISIN
    // stands on the old one, unless a file dates it after an exact ISIN
    // change (then the successor carried it: AMIORG became ACUTAAS on
    // 2025-06-02, after the split of 2025-04-25 gave it a new ISIN). A
    // split or consolidation of either ISIN going ex between the two
    // snapshots dates the change exactly (10.3).
    let mut pairs: HashSet<(&Isin, &Isin)> = HashSet::new();
    let mut last_day: HashMap<Isin, LastDay> = HashMap::new();
    // The daily files' ISINs a pair of the lists goes through.
    let mut chained: HashSet<&Isin> = HashSet::new();
    for s in &succ {
        let (old, new) = (&s.from.row, &s.to.row);
        if !pairs.insert((&old.isin, &new.isin)) {
            continue;
        }
        let exchange = s.series.exchange();
        let seen = prep.last_seen(s.from);
        // The first day the new ISIN traded, inside the bound, after the
        // old one's last trade, dates the change (14.1).
        let traded = (exchange == Exchange::Nse)
            .then(|| prep.daily_day(&new.isin, None, Some(seen), s.date))
            .flatten()
            .filter(|d| daily.last_of(&old.isin).is_none_or(|l| l < *d));
        let start = ev.count(&old.isin);
        if old.symbol != new.symbol {
            let at = (Some(seen), s.date, traded);
            ev.symbol_change(symbol_chains, &old.isin, exchange, &old.symbol, &new.symbol, s.from.since, at);
        }
        if (exchange == Exchange::Nse || !on_nse.contains(&old.isin)) && old.name != new.name {
            ev.name_change(name_chains, &old.isin, &old.name, &new.name, s.from.since, (Some(seen), s.date));
        }
        let faces = (old.face_value, new.face_value);
        let between = (exchange == Exchange::Nse)
            .then(|| daily_between(daily, &facts, symbol_chains, (old, new), seen, s.date))
            .flatten()
            .filter(|(mid, _, _)| !made_daily.contains(mid) && !replaced_daily.contains_key(mid));
        let Some((mid, first, last)) = between else {
            let dated = prep.split_between(&old.isin, &new.isin, seen, s.date).or(traded);
            if let Some(l) = ev.isin_change(&old.isin, &new.isin, faces, start, (Some(seen), s.date, dated)) {
                last_day.insert(old.isin.clone(), l);
            }
            continue;
        };
        // Through an ISIN only the daily files show: to it by a split of
        // either going ex by its first trade (or that trade, when a file
        // before showed neither), from it by a split going ex after its
        // last trade or the successor's first.
        let mid_start = ev.count(mid);
        let dated = prep
            .split_between(&old.isin, mid, seen, first)
            .or_else(|| prep.split_between(&old.isin, &new.isin, seen, first))
            .or(daily.dates(first).then_some(first));
        if let Some(l) = ev.isin_change(&old.isin, mid, (old.face_value, None), start, (Some(seen), first, dated)) {
            last_day.insert(old.isin.clone(), l);
        }
        let traded = prep.daily_day(&new.isin, None, Some(last), s.date);
        let dated = prep.split_between(mid, &new.isin, last, s.date).or(traded);
        if let Some(l) = ev.isin_change(mid, &new.isin, (None, new.face_value), mid_start, (Some(last), s.date, dated))
        {
            last_day.insert(mid.clone(), l);
        }
        chained.insert(mid);
    }

    // The same security under an old ISIN on one exchange and its successor
    // on the other, named by a split or consolidation (10.3).
    let mut linked: Vec<&Isin> = Vec::new();
    for (old, new, change, ex) in split_links(prep, &by, &pairs) {
        ev.push(old, ex, true, None, change.clone());
        ev.push(new, ex, true, None, change);
        linked.push(old);
    }

    // The daily files' own: the ISINs only they show (listed, their
    // symbol changes), and their successions.
    let face = |isin: &Isin| facts.get(isin).and_then(|f| f.face_value);
    let mut daily_only: BTreeMap<Isin, Ticker> = BTreeMap::new();
    let mut at = 0;
    while at < daily.pairs.len() {
        let isin = &daily.pairs[at].isin;
        let ps = daily.of(isin);
        at += ps.len();
        if facts.contains_key(isin) {
            continue;
        }
        let last = ps.iter().max_by_key(|p| p.last).expect("an ISIN has a pair");
        daily_only.insert(isin.clone(), last.symbol.clone());
        if made_daily.contains(isin) || chained.contains(isin) {
            continue;
        }
        let first = &ps[0];
        let listed = IdentityChange::Listed { exchange: Exchange::Nse, symbol: first.symbol.clone() };
        if daily.dates(first.first) {
            ev.push(isin, first.first, true, None, listed);
        } else {
            ev.push(isin, first.first, false, None, listed);
        }
    }
    // A list's ISIN on no NSE list that starts a daily succession traded
    // on NSE all the same, and when the succession ends at an ISIN of
    // NSE's lists (whose own listing the succession makes), its NSE
    // listing is the one that is carried on (AGIIL: INE976R01017, on BSE's
    // list only, traded under AGIIL until its split, to INE976R01033). NSE
    // listed it on the day the last ISIN's list says (`listed_on`), when
    // not after its first trade; else the daily files date it as they
    // date an ISIN only they show.
    let next: HashMap<&Isin, &Isin> = dsucc.iter().map(|d| (d.old, d.new)).collect();
    for d in &dsucc {
        if !facts.contains_key(d.old) || on_nse.contains(d.old) || made_daily.contains(d.old) {
            continue;
        }
        let first = &daily.of(d.old)[0];
        let mut end = d.new;
        for _ in 0..16 {
            match next.get(end) {
                Some(n) => end = n,
                None => break,
            }
        }
        let lists: Vec<&Run> =
            [Series::NseMain, Series::NseSme].iter().filter_map(|s| by.get(&(*s, end))?.first()).copied().collect();
        if lists.is_empty() {
            // Its successors' NSE listing is not lost: none is on a list.
            continue;
        }
        let listed_on = lists.iter().filter_map(|r| r.row.listed_on).filter(|l| *l <= first.first).min();
        let listed = IdentityChange::Listed { exchange: Exchange::Nse, symbol: first.symbol.clone() };
        match listed_on {
            Some(l) => ev.push(d.old, l, true, None, listed),
            None => ev.push(d.old, first.first, daily.dates(first.first), None, listed),
        }
    }
    // Symbol changes the daily files show of ISINs no list shows.
    for isin in daily_only.keys() {
        let ps = daily.of(isin);
        for w in ps.windows(2) {
            if w[0].symbol != w[1].symbol && w[1].first > w[0].first {
                let change = IdentityChange::SymbolChanged {
                    exchange: Exchange::Nse,
                    from: w[0].symbol.clone(),
                    to: w[1].symbol.clone(),
                };
                ev.push(isin, w[1].first, true, None, change);
            }
        }
    }
    for d in &dsucc {
        if d.old_symbol != d.new_symbol && daily.of(d.new).is_empty() {
            // To a list's ISIN after the last daily file: the change files
            // date the symbol's change in between (SABTNL became AQYLON on
            // 2026-02-11, before its split of 2026-03-05), else it is seen
            // with the ISIN's.
            let at = (Some(d.last), d.date, None);
            ev.symbol_change(symbol_chains, d.old, Exchange::Nse, d.old_symbol, d.new_symbol, d.last, at);
        } else if d.old_symbol != d.new_symbol && !daily_only.contains_key(d.old) {
            let change = IdentityChange::SymbolChanged {
                exchange: Exchange::Nse,
                from: d.old_symbol.clone(),
                to: d.new_symbol.clone(),
            };
            ev.push(d.old, d.date, true, None, change);
        }
        let change = IdentityChange::IsinChanged {
            from: d.old.clone(),
            to: d.new.clone(),
            face_value_from: face(d.old),
            face_value_to: face(d.new),
        };
        ev.push(d.old, d.date, true, None, change.clone());
        ev.push(d.new, d.date, true, None, change);
    }

    let mut events = ev.0;
    for list in events.values_mut() {
        // Stable: events of one day stay in the order they were made, but
        // an ISIN's own listing comes before anything else of its day.
        list.sort_by_key(|e| (e.date, !matches!(e.change, IdentityChange::Listed { .. })));
    }

    let superseded: HashSet<&Isin> =
        succ.iter().map(|s| &s.from.row.isin).chain(linked).chain(dsucc.iter().map(|d| d.old)).chain(chained).collect();
    let mut status = by.iter().fold(HashMap::<Isin, CompanyStatus>::new(), |mut m, ((_, isin), rs)| {
        let current = rs.iter().any(|r| r.until.is_none());
        let st = CompanyStatus::of(superseded.contains(isin), current);
        let slot = m.entry((*isin).clone()).or_insert(st);
        if st == CompanyStatus::Active && *slot == CompanyStatus::Delisted {
            *slot = st;
        }
        m
    });
    let mut listings: HashMap<Isin, Vec<ListingSeen>> = HashMap::new();
    for ((series, isin), rs) in &by {
        let exchange = series.exchange();
        let list = listings.entry((*isin).clone()).or_default();
        for r in rs {
            let (listed, last_seen) = (r.until.is_none(), prep.last_seen(r));
            match list.iter_mut().find(|l| l.exchange == exchange) {
                Some(l) => {
                    l.listed |= listed;
                    l.last_seen = l.last_seen.max(last_seen);
                }
                None => list.push(ListingSeen { exchange, listed, last_seen }),
            }
        }
        list.sort_by_key(|l| l.exchange != Exchange::Nse);
    }
    // The daily files: ISINs only they show, and the latest file that
    // showed each ISIN on NSE (a listing they never delist).
    for isin in daily_only.keys() {
        status.insert(isin.clone(), CompanyStatus::of(superseded.contains(isin), false));
    }
    let mut at = 0;
    while at < daily.pairs.len() {
        let isin = &daily.pairs[at].isin;
        let ps = daily.of(isin);
        at += ps.len();
        let last = ps.iter().map(|p| p.last).max().expect("an ISIN has a pair");
        let list = listings.entry(isin.clone()).or_default();
        match list.iter_mut().find(|l| l.exchange == Exchange::Nse) {
            Some(l) => l.last_seen = l.last_seen.max(last),
            None => list.push(ListingSeen { exchange: Exchange::Nse, listed: false, last_seen: last }),
        }
        list.sort_by_key(|l| l.exchange != Exchange::Nse);
    }
    Derived { events, status, listings, daily_only, last_day }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::SnapshotRow;
    use crate::testing::day;

    fn run(series: Series, isin: &str, symbol: &str, name: &str, fv: f64, since: &str, until: Option<&str>) -> Run {
        Run {
            series,
            row: SnapshotRow {
                isin: Isin::parse(isin).unwrap(),
                symbol: Ticker::parse(symbol).unwrap(),
                name: name.into(),
                face_value: Some(fv),
                listed_on: None,
            },
            since: day(since),
            until: until.map(day),
        }
    }

    fn kinds(d: &Derived, isin: &str) -> Vec<(&'static str, String, bool)> {
        d.events[&Isin::parse(isin).unwrap()].iter().map(|e| (e.change.kind(), e.date.to_string(), e.exact)).collect()
    }

    const A: &str = "2024-01-30";
    const B: &str = "2026-05-17";

    /// The chains find the same rows when every key's hash collides: a
    /// shared hash only makes candidates, which the fold check refuses.
    #[test]
    fn chains_find_the_same_rows_when_every_hash_collides() {
        let t = |s: &str| Ticker::parse(s).unwrap();
        let rows = [
            ("A", "B", "2020-01-01"),
            ("B", "C", "2021-01-01"),
            ("C", "D", "2022-01-01"),
            ("X", "C", "2021-06-01"),
            ("B", "Y", "2021-03-01"),
            ("Q", "Q", "2021-03-01"),
        ]
        .map(|(f, to, d)| (t(f), t(to), day(d)));
        let fold: fn(&Ticker) -> String = |t| t.as_str().to_owned();
        let each = || rows.iter().map(|(f, to, d)| (f, to, *d));
        let (real, colliding) = (Chains::new(each(), fold), Chains::hashed(each(), fold, |_| 7));
        let (lo, hi) = (day("2019-01-01"), day("2023-01-01"));
        for from in ["A", "B", "C", "X", "Q", "Z"].map(t) {
            assert_eq!(real.reachable(&from, lo, hi), colliding.reachable(&from, lo, hi));
            assert_eq!(real.back(&from, lo, hi, |_| true), colliding.back(&from, lo, hi, |_| true));
            for to in ["B", "C", "D", "Y"].map(t) {
                assert_eq!(real.path(&from, &to, lo, hi), colliding.path(&from, &to, lo, hi));
            }
        }
        assert_eq!(colliding.path(&t("A"), &t("D"), lo, hi).map(|p| p.len()), Some(3));
        assert_eq!(colliding.back(&t("D"), lo, hi, |_| true).len(), 2);
        assert_eq!(colliding.reachable(&t("A"), lo, hi).len(), 5);
    }

    fn daily(rows: &[(&str, &str, &str, &str)], days: &[&str]) -> Daily {
        let pairs = rows
            .iter()
            .map(|(i, s, f, l)| crate::snapshot::daily::DailySeen {
                isin: Isin::parse(i).unwrap(),
                symbol: Ticker::parse(s).unwrap(),
                first: day(f),
                last: day(l),
            })
            .collect();
        Daily::new(pairs, days.iter().map(|d| day(d)).collect())
    }

    /// Contract 14.1: PRITIKA's pre-split ISIN traded until 2025-02-13 and
    /// is in no list; its successor first traded on 2025-02-17 and is in
    /// the list of 2026-05-17 (with the old date of listing). The daily
    /// files make the old ISIN known, superseded on that first day, exact.
    #[test]
    fn an_isin_only_the_daily_files_show_becomes_known_and_its_change_is_dated_by_the_first_trade() {
        let (old, new) = ("INE0MJQ01012", "INE0MJQ01020");
        let mut r = run(Series::NseSme, new, "PRITIKA", "Pritika Engineering Components Limited", 5.0, B, None);
        r.row.listed_on = Some(day("2022-12-08"));
        let days = ["2025-01-01", "2025-02-13", "2025-02-17", "2025-03-07"];
        let files =
            daily(&[(old, "PRITIKA", "2025-01-01", "2025-02-13"), (new, "PRITIKA", "2025-02-17", "2025-03-07")], &days);
        let without = Deriver::new(&[], &[]).derive(std::slice::from_ref(&r));
        assert!(!without.events.contains_key(&Isin::parse(old).unwrap()));
        let d = Deriver::new(&[], &[]).with_daily(files).derive(&[r]);
        assert_eq!(
            kinds(&d, old),
            vec![("listed", "2025-01-01".into(), false), ("isin_changed", "2025-02-17".into(), true)]
        );
        assert_eq!(kinds(&d, new), vec![("isin_changed", "2025-02-17".into(), true)]);
        let (o, n) = (Isin::parse(old).unwrap(), Isin::parse(new).unwrap());
        assert_eq!(d.status[&o], CompanyStatus::Superseded);
        assert_eq!(d.status[&n], CompanyStatus::Active);
        assert_eq!(d.daily_only.get(&o).map(Ticker::as_str), Some("PRITIKA"));
        assert_eq!(
            d.listings[&o],
            vec![ListingSeen { exchange: Exchange::Nse, listed: false, last_seen: day("2025-02-13") }]
        );
        // The successor's NSE listing counts its latest file.
        assert_eq!(d.listings[&n][0].last_seen, day(B));
    }

    /// Section 10.3: a change two lists only bound is dated by the first
    /// day the daily files show its new state inside the bound.
    #[test]
    fn the_daily_files_date_what_the_lists_only_bound() {
        let runs = vec![
            run(Series::NseMain, "INE592B01016", "OLDSYM", "Ttl Limited", 10.0, A, Some(B)),
            run(Series::NseMain, "INE592B01024", "NEWSYM", "Ttl Limited", 1.0, B, None),
            run(Series::NseMain, "INE758T01015", "BEFORE", "Other Limited", 1.0, A, Some(B)),
            run(Series::NseMain, "INE758T01015", "AFTER", "Other Limited", 1.0, B, None),
        ];
        let files = daily(
            &[
                ("INE592B01016", "OLDSYM", "2025-01-01", "2025-02-11"),
                ("INE592B01024", "NEWSYM", "2025-02-12", "2025-03-07"),
                ("INE758T01015", "BEFORE", "2025-01-01", "2025-01-20"),
                ("INE758T01015", "AFTER", "2025-01-21", "2025-03-07"),
            ],
            &["2025-01-01", "2025-01-20", "2025-01-21", "2025-02-11", "2025-02-12", "2025-03-07"],
        );
        let symbols = [SymbolChange {
            from: Ticker::parse("OLDSYM").unwrap(),
            to: Ticker::parse("NEWSYM").unwrap(),
            date: day("2025-02-12"),
            company: String::new(),
        }];
        let before = derive(&runs, &symbols, &[]);
        assert_eq!(kinds(&before, "INE592B01024"), vec![("isin_changed", B.into(), false)]);
        let d = Deriver::new(&symbols, &[]).with_daily(files).derive(&runs);
        assert_eq!(kinds(&d, "INE592B01024"), vec![("isin_changed", "2025-02-12".into(), true)]);
        assert_eq!(
            kinds(&d, "INE758T01015"),
            vec![("listed", A.into(), false), ("symbol_changed", "2025-01-21".into(), true)]
        );
    }

    fn split(isin: &str, ex: &str, from: f64, to: f64) -> SplitAction {
        SplitAction {
            isin: Isin::parse(isin).unwrap(),
            ex_date: day(ex),
            face_value_from: Some(from),
            face_value_to: Some(to),
            new_isin: None,
        }
    }

    /// Section 10.3, AGIIL on the real files: BSE's 2024 list shows
    /// INE976R01017; the daily files show it until 2025-02-06 and
    /// INE976R01025 from its split of 2025-02-07 to their last file; NSE's
    /// 2026 list shows INE976R01033 (listed, it says, 2024-07-15). The
    /// split of 2025-10-10 links the ISIN still traded in the last daily
    /// file to the list's; without it the two stay unrelated.
    #[test]
    fn a_split_after_the_last_daily_file_links_its_isin_to_the_lists() {
        let (a, b, c) = ("INE976R01017", "INE976R01025", "INE976R01033");
        let mut new = run(Series::NseMain, c, "AGIIL", "Agi Infra Limited", 1.0, B, None);
        new.row.listed_on = Some(day("2024-07-15"));
        let runs = vec![run(Series::Bse, a, "AGIIL", "AGI Infra Ltd", 10.0, A, None), new];
        let days = ["2025-01-01", "2025-02-06", "2025-02-07", "2025-03-07"];
        let files =
            || daily(&[(a, "AGIIL", "2025-01-01", "2025-02-06"), (b, "AGIIL", "2025-02-07", "2025-03-07")], &days);
        let without = Deriver::new(&[], &[]).with_daily(files()).derive(&runs);
        assert_eq!(kinds(&without, b), vec![("isin_changed", "2025-02-07".into(), true)]);
        assert_eq!(kinds(&without, a), vec![("listed", A.into(), false), ("isin_changed", "2025-02-07".into(), true)]);
        assert_eq!(kinds(&without, c), vec![("listed", "2024-07-15".into(), true)]);
        for on in [b, c] {
            let d = Deriver::new(&[], &[])
                .with_daily(files())
                .with_splits(vec![split(on, "2025-10-10", 5.0, 1.0)])
                .derive(&runs);
            assert_eq!(
                kinds(&d, b),
                vec![("isin_changed", "2025-02-07".into(), true), ("isin_changed", "2025-10-10".into(), true)],
                "the split filed under {on}"
            );
            assert_eq!(kinds(&d, c), vec![("isin_changed", "2025-10-10".into(), true)]);
            // NSE's listing, the successor's day, is the first ISIN's.
            assert_eq!(
                kinds(&d, a),
                vec![
                    ("listed", A.into(), false),
                    ("listed", "2024-07-15".into(), true),
                    ("isin_changed", "2025-02-07".into(), true)
                ]
            );
            assert_eq!(d.status[&Isin::parse(b).unwrap()], CompanyStatus::Superseded);
            assert_eq!(d.status[&Isin::parse(c).unwrap()], CompanyStatus::Active);
        }
        // A split going ex before the ISIN's last trade is not its change.
        let early = Deriver::new(&[], &[]).with_daily(files()).with_splits(vec![split(c, "2025-03-01", 5.0, 1.0)]);
        assert_eq!(kinds(&early.derive(&runs), c), vec![("listed", "2024-07-15".into(), true)]);
        // Nor one of another symbol's ISIN.
        let mut other = runs.clone();
        other[1].row.symbol = Ticker::parse("AGIREIT").unwrap();
        let d = Deriver::new(&[], &[]).with_daily(files()).with_splits(vec![split(c, "2025-10-10", 5.0, 1.0)]);
        assert_eq!(kinds(&d.derive(&other), c), vec![("listed", "2024-07-15".into(), true)]);
        // Unless a change file's row leads there: it dates the change.
        let renamed = [SymbolChange {
            from: Ticker::parse("AGIIL").unwrap(),
            to: Ticker::parse("AGIREIT").unwrap(),
            date: day("2025-09-01"),
            company: String::new(),
        }];
        let d = Deriver::new(&renamed, &[]).with_daily(files()).with_splits(vec![split(c, "2025-10-10", 5.0, 1.0)]);
        let d = d.derive(&other);
        assert_eq!(
            kinds(&d, b),
            vec![
                ("isin_changed", "2025-02-07".into(), true),
                ("symbol_changed", "2025-09-01".into(), true),
                ("isin_changed", "2025-10-10".into(), true)
            ]
        );
    }

    /// Section 10.3, NAVKARURB on the real files: the old ISIN is on BSE's
    /// 2024 list and still traded in the last daily file; the successor is
    /// on NSE's 2026 list, listed (it says) years before its split. Rule h
    /// links them on the split, and the successor keeps its own NSE
    /// listing: the daily rule is for ISINs no list shows.
    #[test]
    fn a_listed_isin_traded_to_the_last_daily_file_is_rule_hs() {
        let (a, b) = ("INE268H01036", "INE268H01044");
        let mut new = run(Series::NseMain, b, "NAVKARURB", "Navkar Urbanstructure Limited", 1.0, B, None);
        new.row.listed_on = Some(day("2018-01-01"));
        let old = run(Series::Bse, a, "NAVKARURB", "Navkar Urbanstructure Ltd", 2.0, A, None);
        let files = daily(&[(a, "NAVKARURB", "2025-01-01", "2025-03-07")], &["2025-01-01", "2025-03-07"]);
        let d = Deriver::new(&[], &[])
            .with_daily(files)
            .with_splits(vec![split(b, "2025-05-09", 2.0, 1.0)])
            .derive(&[old, new]);
        assert_eq!(
            kinds(&d, b),
            vec![("listed", "2018-01-01".into(), true), ("isin_changed", "2025-05-09".into(), true)]
        );
        assert_eq!(kinds(&d, a), vec![("listed", A.into(), false), ("isin_changed", "2025-05-09".into(), true)]);
    }

    /// Section 10.3, VERTOZ on the real files: NSE's lists show
    /// INE188Y01015 (2024) and INE188Y01031 (2026); the daily files show
    /// INE188Y01023 between them, from its split and bonus of 2024-07-05 to
    /// their last file, and its consolidation of 2025-06-25 made the
    /// list's ISIN. The lists' change goes through it, each step dated.
    #[test]
    fn a_change_of_the_lists_goes_through_the_isin_the_daily_files_show_between() {
        let (a, b, c) = ("INE188Y01015", "INE188Y01023", "INE188Y01031");
        let runs = vec![
            run(Series::NseMain, a, "VERTOZ", "Vertoz Limited", 10.0, A, Some(B)),
            run(Series::NseMain, c, "VERTOZ", "Vertoz Limited", 10.0, B, None),
        ];
        let days = ["2024-01-01", "2024-07-04", "2024-07-05", "2025-03-07"];
        let files =
            || daily(&[(a, "VERTOZ", "2024-01-01", "2024-07-04"), (b, "VERTOZ", "2024-07-05", "2025-03-07")], &days);
        let splits = || vec![split(c, "2024-07-05", 10.0, 1.0), split(c, "2025-06-25", 1.0, 10.0)];
        let before = Deriver::new(&[], &[]).with_splits(splits()).derive(&runs);
        assert_eq!(kinds(&before, c)[0], ("isin_changed", "2024-07-05".into(), true));
        let d = Deriver::new(&[], &[]).with_daily(files()).with_splits(splits()).derive(&runs);
        assert_eq!(kinds(&d, a)[1..], [("isin_changed", "2024-07-05".into(), true)]);
        assert_eq!(
            kinds(&d, b),
            vec![("isin_changed", "2024-07-05".into(), true), ("isin_changed", "2025-06-25".into(), true)]
        );
        assert_eq!(kinds(&d, c), vec![("isin_changed", "2025-06-25".into(), true)]);
        let to = |isin: &str| match &d.events[&Isin::parse(isin).unwrap()].last().unwrap().change {
            IdentityChange::IsinChanged { to, .. } => to.as_str().to_owned(),
            other => panic!("{other:?}"),
        };
        assert_eq!((to(a), to(b)), (b.to_owned(), c.to_owned()));
        assert_eq!(d.status[&Isin::parse(b).unwrap()], CompanyStatus::Superseded);
        // Without the first file's day before the split, the split still
        // dates the first step; without any split, the daily file does.
        let late =
            daily(&[(a, "VERTOZ", "2024-07-04", "2024-07-04"), (b, "VERTOZ", "2024-07-05", "2025-03-07")], &days[1..]);
        let d = Deriver::new(&[], &[]).with_daily(late).derive(&runs);
        assert_eq!(kinds(&d, b), vec![("isin_changed", "2024-07-05".into(), true), ("isin_changed", B.into(), false)]);
    }

    #[test]
    fn a_split_is_one_isin_change_under_both_isins() {
        let runs = vec![
            run(Series::NseMain, "INE296A01024", "BAJFINANCE", "Bajaj Finance Limited", 2.0, A, Some(B)),
            run(Series::NseMain, "INE296A01032", "BAJFINANCE", "Bajaj Finance Limited", 1.0, B, None),
        ];
        let d = derive(&runs, &[], &[]);
        assert_eq!(kinds(&d, "INE296A01024"), vec![("listed", A.into(), false), ("isin_changed", B.into(), false)]);
        assert_eq!(kinds(&d, "INE296A01032"), vec![("isin_changed", B.into(), false)]);
        let e = &d.events[&Isin::parse("INE296A01032").unwrap()][0];
        assert!(matches!(
            e.change,
            IdentityChange::IsinChanged { face_value_from: Some(2.0), face_value_to: Some(1.0), .. }
        ));
        assert_eq!(d.status[&Isin::parse("INE296A01024").unwrap()], CompanyStatus::Superseded);
        assert_eq!(d.status[&Isin::parse("INE296A01032").unwrap()], CompanyStatus::Active);
    }

    /// Section 10.3: a listing gone from its series' latest snapshot is not
    /// listed, whatever another exchange's (older) list says; `last_seen`
    /// is the latest snapshot that showed it.
    /// Section 10.3: what only snapshots date carries the days that bound
    /// it; a split of either ISIN going ex between them dates the ISIN
    /// change exactly.
    #[test]
    fn observed_changes_are_bounded_and_a_split_dates_the_isin_change() {
        let mid = "2025-03-01";
        let runs = vec![
            run(Series::NseMain, "INE296A01024", "BAJFINANCE", "Bajaj Finance Limited", 2.0, A, Some(B)),
            run(Series::NseMain, "INE296A01032", "BAJFINANCE", "Bajaj Finance Limited", 1.0, B, None),
            run(Series::NseMain, "INE144J01027", "GONE", "Gone Limited", 5.0, A, Some(B)),
        ];
        let days: Vec<(Series, NaiveDate)> = [A, mid, B].iter().map(|d| (Series::NseMain, day(d))).collect();
        let d = Deriver::new(&[], &[]).with_days(&days).derive(&runs);
        let old = &d.events[&Isin::parse("INE296A01024").unwrap()];
        assert_eq!(old[0].observed_between, None, "listed in the first snapshot: nothing bounds it");
        assert_eq!(old[1].observed_between, Some([day(mid), day(B)]), "last seen unchanged in {mid}");
        let gone = &d.events[&Isin::parse("INE144J01027").unwrap()];
        assert_eq!(gone[1].observed_between, Some([day(mid), day(B)]));
        // The split of 2025-06-16 goes ex between the snapshots: exact.
        let split = SplitAction {
            isin: Isin::parse("INE296A01024").unwrap(),
            ex_date: day("2025-06-16"),
            face_value_from: Some(2.0),
            face_value_to: Some(1.0),
            new_isin: None,
        };
        let d = Deriver::new(&[], &[]).with_days(&days).with_splits(vec![split.clone()]).derive(&runs);
        for isin in ["INE296A01024", "INE296A01032"] {
            let e = d.events[&Isin::parse(isin).unwrap()].last().unwrap().clone();
            assert_eq!((e.date, e.exact, e.observed_between), (day("2025-06-16"), true, None), "{isin}");
        }
        // One before the last snapshot that showed the old ISIN dates nothing.
        let early = SplitAction { ex_date: day("2024-12-01"), ..split };
        let d = Deriver::new(&[], &[]).with_days(&days).with_splits(vec![early]).derive(&runs);
        assert_eq!(kinds(&d, "INE296A01032"), vec![("isin_changed", B.into(), false)]);
    }

    /// Section 10.3: a symbol and a name change the change files date after
    /// an exact ISIN change are the successor's (AMIORG, split to a new
    /// ISIN on 2025-04-25, became ACUTAAS on 2025-06-02); dated before it,
    /// or with the ISIN change only observed, they stay on the old ISIN.
    #[test]
    fn a_change_dated_after_an_exact_isin_change_is_the_successors() {
        let (old, new) = ("INE00FF01017", "INE00FF01025");
        let runs = vec![
            run(Series::NseMain, old, "AMIORG", "Ami Organics Limited", 10.0, A, Some(B)),
            run(Series::NseMain, new, "ACUTAAS", "Acutaas Chemicals Limited", 5.0, B, None),
        ];
        let days: Vec<(Series, NaiveDate)> = [A, B].iter().map(|d| (Series::NseMain, day(d))).collect();
        let symbols = [SymbolChange {
            from: Ticker::parse("AMIORG").unwrap(),
            to: Ticker::parse("ACUTAAS").unwrap(),
            date: day("2025-06-02"),
            company: "Acutaas Chemicals Limited".into(),
        }];
        let names = [NameChange {
            symbol: Ticker::parse("ACUTAAS").unwrap(),
            from: "Ami Organics Limited".into(),
            to: "Acutaas Chemicals Limited".into(),
            date: day("2025-06-02"),
        }];
        let split = |ex: &str| SplitAction {
            isin: Isin::parse(old).unwrap(),
            ex_date: day(ex),
            face_value_from: Some(10.0),
            face_value_to: Some(5.0),
            new_isin: None,
        };
        let with = |splits: Vec<SplitAction>| {
            Deriver::new(&symbols, &names).with_days(&days).with_splits(splits).derive(&runs)
        };
        let changed = "2025-06-02".to_owned();
        let d = with(vec![split("2025-04-25")]);
        let at = "2025-04-25".to_owned();
        assert_eq!(kinds(&d, old), vec![("listed", A.into(), false), ("isin_changed", at.clone(), true)]);
        assert_eq!(
            kinds(&d, new),
            vec![
                ("isin_changed", at, true),
                ("symbol_changed", changed.clone(), true),
                ("name_changed", changed.clone(), true)
            ]
        );
        // What the old ISIN was called on its last day, for its company.
        let last = LastDay {
            symbols: vec![(Exchange::Nse, Ticker::parse("AMIORG").unwrap())],
            name: Some("Ami Organics Limited".into()),
        };
        assert_eq!(d.last_day, HashMap::from([(Isin::parse(old).unwrap(), last)]));
        // The split after the renaming: the old ISIN was renamed.
        let d = with(vec![split("2025-07-01")]);
        let renamed = [("symbol_changed", changed.clone(), true), ("name_changed", changed.clone(), true)];
        assert_eq!(kinds(&d, old)[1..3], renamed[..]);
        assert_eq!(kinds(&d, new), vec![("isin_changed", "2025-07-01".into(), true)]);
        assert!(d.last_day.is_empty());
        // No split: the ISIN change is only observed, at the later list.
        let d = with(vec![]);
        assert_eq!(kinds(&d, old)[1..3], renamed[..]);
        assert_eq!(kinds(&d, new), vec![("isin_changed", B.into(), false)]);
    }

    /// Section 10.3 rule h: BSE's list has the old ISIN, NSE's the
    /// successor (BESTAGRO, split from Rs 10 to Re 1 on 2026-01-16): the
    /// split links them, whichever ISIN its row was resolved to.
    #[test]
    fn a_split_links_an_old_isin_on_bse_to_its_successor_on_nse() {
        let (old, new) = ("INE052T01013", "INE052T01021");
        let runs = vec![
            run(Series::Bse, old, "BESTAGRO", "Best Agrolife Ltd", 10.0, A, None),
            run(Series::NseMain, new, "BESTAGRO", "Best Agrolife Limited", 1.0, B, None),
            // Another ISIN of the issuer on BSE: not a candidate.
            run(Series::Bse, "INE052T08018", "BESTNCD", "Best Agrolife NCD", 1000.0, A, None),
        ];
        let split = |isin: &str| SplitAction {
            isin: Isin::parse(isin).unwrap(),
            ex_date: day("2026-01-16"),
            face_value_from: Some(10.0),
            face_value_to: Some(1.0),
            new_isin: None,
        };
        let without = derive(&runs, &[], &[]);
        assert_eq!(without.status[&Isin::parse(old).unwrap()], CompanyStatus::Active, "two unrelated actives");
        for by in [old, new] {
            let d = Deriver::new(&[], &[]).with_splits(vec![split(by)]).derive(&runs);
            assert_eq!(d.status[&Isin::parse(old).unwrap()], CompanyStatus::Superseded, "by {by}");
            assert_eq!(d.status[&Isin::parse(new).unwrap()], CompanyStatus::Active);
            for isin in [old, new] {
                let e = d.events[&Isin::parse(isin).unwrap()].iter().find(|e| e.change.kind() == "isin_changed");
                let e = e.expect("linked under both ISINs");
                assert_eq!((e.date, e.exact), (day("2026-01-16"), true));
                assert!(matches!(&e.change, IdentityChange::IsinChanged { from, to, .. }
                    if from.as_str() == old && to.as_str() == new));
            }
        }
        // Face values that do not fit link nothing.
        let wrong = SplitAction { face_value_from: Some(5.0), ..split(old) };
        let d = Deriver::new(&[], &[]).with_splits(vec![wrong]).derive(&runs);
        assert_eq!(d.status[&Isin::parse(old).unwrap()], CompanyStatus::Active);
    }

    #[test]
    fn a_listing_gone_from_its_series_latest_snapshot_is_not_listed() {
        let mid = "2025-03-01";
        let runs = vec![
            // Gone from NSE at B, still on BSE's only list (of A).
            run(Series::NseMain, "INE253A01025", "HINDMOTORS", "Hindustan Motors Limited", 5.0, A, Some(B)),
            run(Series::Bse, "INE253A01025", "HINDMOTORS", "Hindustan Motors Ltd.", 5.0, A, None),
            // Moved from the SME list to the main board: still listed.
            run(Series::NseSme, "INE0AAA01010", "MOVER", "Mover Limited", 10.0, A, Some(B)),
            run(Series::NseMain, "INE0AAA01010", "MOVER", "Mover Limited", 10.0, B, None),
        ];
        let days = [(Series::NseMain, A), (Series::NseMain, mid), (Series::NseMain, B), (Series::NseSme, A)]
            .map(|(s, d)| (s, day(d)))
            .into_iter()
            .chain([(Series::NseSme, day(B)), (Series::Bse, day(A))])
            .collect::<Vec<_>>();
        let d = Deriver::new(&[], &[]).with_days(&days).derive(&runs);
        let seen = |isin: &str| d.listings[&Isin::parse(isin).unwrap()].clone();
        assert_eq!(
            seen("INE253A01025"),
            vec![
                ListingSeen { exchange: Exchange::Nse, listed: false, last_seen: day(mid) },
                ListingSeen { exchange: Exchange::Bse, listed: true, last_seen: day(A) },
            ]
        );
        assert_eq!(
            seen("INE0AAA01010"),
            vec![ListingSeen { exchange: Exchange::Nse, listed: true, last_seen: day(B) }]
        );
        // Still listed on BSE: active, as 10.2 says.
        assert_eq!(d.status[&Isin::parse("INE253A01025").unwrap()], CompanyStatus::Active);
        // Without the days, the first day of the latest run.
        let bare = derive(&runs, &[], &[]);
        assert_eq!(bare.listings[&Isin::parse("INE253A01025").unwrap()][0].last_seen, day(A));
    }

    #[test]
    fn another_issuer_under_the_old_name_is_a_new_listing() {
        let runs = vec![
            run(Series::NseMain, "INE155A01022", "TATAMOTORS", "Tata Motors Limited", 2.0, A, Some(B)),
            run(Series::NseMain, "INE155A01022", "TMPV", "Tata Motors Passenger Vehicles Limited", 2.0, B, None),
            run(Series::NseMain, "INE1TAE01010", "TMCV", "Tata Motors Limited", 2.0, B, None),
        ];
        let symbols = [SymbolChange {
            from: Ticker::parse("TATAMOTORS").unwrap(),
            to: Ticker::parse("TMPV").unwrap(),
            date: day("2025-10-24"),
            company: "Tata Motors Passenger Vehicles Limited".into(),
        }];
        let d = derive(&runs, &symbols, &[]);
        assert_eq!(
            kinds(&d, "INE155A01022"),
            vec![
                ("listed", A.into(), false),
                ("symbol_changed", "2025-10-24".into(), true),
                ("name_changed", B.into(), false)
            ]
        );
        assert_eq!(kinds(&d, "INE1TAE01010"), vec![("listed", B.into(), false)]);
        assert!(d.status.values().all(|s| *s == CompanyStatus::Active));
    }

    #[test]
    fn gone_without_a_successor_is_delisted_and_a_chain_is_one_event_per_row() {
        let runs = vec![
            run(Series::NseMain, "INE758T01015", "ZOMATO", "Zomato Limited", 1.0, A, Some(B)),
            run(Series::NseMain, "INE758T01015", "ETERNAL", "Eternal Limited", 1.0, B, None),
            run(Series::NseMain, "INE144J01027", "GONE", "Gone Limited", 5.0, A, Some(B)),
        ];
        let t = |s: &str| Ticker::parse(s).unwrap();
        let symbols = [
            SymbolChange { from: t("ZOMATO"), to: t("ZOMATO2"), date: day("2025-01-01"), company: String::new() },
            SymbolChange { from: t("ZOMATO2"), to: t("ETERNAL"), date: day("2025-04-09"), company: String::new() },
            SymbolChange { from: t("ETERNAL"), to: t("ETERNAL"), date: day("2025-04-10"), company: String::new() },
        ];
        let names = [NameChange {
            symbol: t("ETERNAL"),
            from: "Zomato Limited".into(),
            to: "ETERNAL LIMITED".into(),
            date: day("2025-04-09"),
        }];
        let d = derive(&runs, &symbols, &names);
        assert_eq!(
            kinds(&d, "INE758T01015"),
            vec![
                ("listed", A.into(), false),
                ("symbol_changed", "2025-01-01".into(), true),
                ("symbol_changed", "2025-04-09".into(), true),
                ("name_changed", "2025-04-09".into(), true),
            ]
        );
        let last = d.events[&Isin::parse("INE758T01015").unwrap()].last().unwrap().clone();
        assert_eq!(
            last.change,
            IdentityChange::NameChanged { from: "Zomato Limited".into(), to: "Eternal Limited".into() }
        );
        assert_eq!(kinds(&d, "INE144J01027"), vec![("listed", A.into(), false), ("delisted", B.into(), false)]);
        assert_eq!(d.status[&Isin::parse("INE144J01027").unwrap()], CompanyStatus::Delisted);
        // The same inputs in another order give the same events.
        let mut rev = runs.clone();
        rev.reverse();
        let mut srev = symbols.to_vec();
        srev.reverse();
        assert_eq!(derive(&rev, &srev, &names), d);
    }

    #[test]
    fn a_listing_date_is_exact_and_links_earlier_symbol_changes() {
        let mut r = run(Series::NseMain, "INE155A01022", "TATAMOTORS", "Tata Motors Limited", 2.0, A, None);
        r.row.listed_on = Some(day("1998-07-22"));
        let t = |s: &str| Ticker::parse(s).unwrap();
        let symbols =
            [SymbolChange { from: t("TELCO"), to: t("TATAMOTORS"), date: day("2003-12-26"), company: String::new() }];
        let names = [NameChange {
            symbol: t("TMPV"),
            from: "Tata Engineering And Locomotive Co. Ltd.".into(),
            to: "Tata Motors Limited".into(),
            date: day("2003-11-24"),
        }];
        let mut later = r.clone();
        later.until = None;
        let d = derive(&[r.clone()], &symbols, &names);
        let es = &d.events[&Isin::parse("INE155A01022").unwrap()];
        assert_eq!(es[0].change, IdentityChange::Listed { exchange: Exchange::Nse, symbol: t("TELCO") });
        assert!(es[0].exact);
        assert_eq!(es[0].date, day("1998-07-22"));
        // The name row names TMPV, a symbol this ISIN never carried here.
        assert_eq!(es.len(), 2);
        let symbols2 = [
            symbols[0].clone(),
            SymbolChange { from: t("TATAMOTORS"), to: t("TMPV"), date: day("2025-10-24"), company: String::new() },
        ];
        let d = derive(&[r], &symbols2, &names);
        assert_eq!(d.events[&Isin::parse("INE155A01022").unwrap()].len(), 3);
    }
}
