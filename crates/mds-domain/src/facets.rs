//! What lists the values the exact-match filters take (contract section
//! 15): the classification tree of `GET /v1/industries`
//! ([`Industries`]), the categories and tags of `GET /v1/news/facets`
//! ([`NewsFacets`]), and the `hint` an empty page carries when such a
//! filter names a value that does not exist ([`Hint`], its values chosen
//! by [`nearest`]).
//!
//! Facets and tree nodes are ordered by count descending, then name; an
//! unknown level (`name: null`) comes last among its siblings.

use std::cmp::Reverse;

use serde::{Deserialize, Serialize};

use crate::NewsFilter;
use crate::news::{CATEGORY, TAG};
use crate::query::fold;

/// How many values a [`Hint`] names at most.
pub const HINT_MAX: usize = 5;

/// On an empty page whose exact-match filter (`industry`, `category`,
/// `tag`) names a value that does not exist: the parameter and the
/// existing values nearest to the one given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Hint))]
pub struct Hint {
    /// The parameter whose value does not exist.
    pub param: String,
    /// Up to 5 existing values nearest to the one given, nearest first: the
    /// same but for case, then one holding the other, then a small edit
    /// distance, then a shared word; empty when none is near.
    pub nearest: Vec<String>,
}

impl Hint {
    /// The hint for `param` given `value`, among `existing`.
    pub fn new<'a>(param: &str, value: &str, existing: impl IntoIterator<Item = &'a str>) -> Self {
        Hint { param: param.to_owned(), nearest: nearest(value, existing).into_iter().map(str::to_owned).collect() }
    }
}

/// The hint of a news list page under `filter` (an empty one): for the
/// first of `category` and `tag` given whose value does not exist
/// (`exists(param, value)`), the nearest of its existing values
/// (`values(param)`).
pub fn news_hint<'a, I: IntoIterator<Item = &'a str>>(
    filter: &NewsFilter,
    exists: impl Fn(&str, &str) -> bool,
    values: impl Fn(&str) -> I,
) -> Option<Hint> {
    [(CATEGORY, &filter.category), (TAG, &filter.tag)].into_iter().find_map(|(param, value)| {
        let value = value.as_ref()?.as_str();
        (!exists(param, value)).then(|| Hint::new(param, value, values(param)))
    })
}

/// Up to [`HINT_MAX`] of `existing` nearest to `value`, nearest first.
/// Compared folded (case-insensitive, NFC), a candidate is near when it
/// is, in this order of preference:
/// 1. the same but for case;
/// 2. one of the two contains the other;
/// 3. within an edit distance (Levenshtein, by characters) of a third of
///    the value's length, at least 2;
/// 4. sharing a word of three characters or more, a word within an edit
///    of each quarter of its length counting as the same (more shared
///    words first).
///
/// Within a kind, by edit distance, then by the value itself. Others are
/// not named: a far value is no help.
pub fn nearest<'a>(value: &str, existing: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let want = fold(value);
    let want_chars: Vec<char> = want.chars().collect();
    let want_words = words(&want);
    let budget = (want_chars.len() / 3).max(2);
    let mut near: Vec<((u8, usize, usize), &str)> = Vec::new();
    for candidate in existing {
        let c = fold(candidate);
        let chars: Vec<char> = c.chars().collect();
        let d = distance(&want_chars, &chars);
        let kind = if c == want {
            0
        } else if c.contains(want.as_str()) || want.contains(c.as_str()) {
            1
        } else if d <= budget {
            2
        } else {
            let theirs = words(&c);
            let shared = want_words.iter().filter(|w| theirs.iter().any(|t| near_word(w, t))).count();
            if shared == 0 {
                continue;
            }
            near.push(((3, usize::MAX - shared, d), candidate));
            continue;
        };
        near.push(((kind, 0, d), candidate));
    }
    near.sort();
    near.dedup_by(|a, b| a.1 == b.1);
    near.into_iter().take(HINT_MAX).map(|(_, v)| v).collect()
}

/// The words of folded text: runs of letters and digits, three or more.
fn words(folded: &str) -> Vec<Vec<char>> {
    folded
        .split(|c: char| !c.is_alphanumeric())
        .map(|w| w.chars().collect::<Vec<_>>())
        .filter(|w| w.len() >= 3)
        .collect()
}

/// Whether the words `a` (of the value) and `b` are the same but for an
/// edit per quarter of `a`'s length (at least one).
fn near_word(a: &[char], b: &[char]) -> bool {
    a.len().abs_diff(b.len()) <= (a.len() / 4).max(1) && distance(a, b) <= (a.len() / 4).max(1)
}

/// The Levenshtein distance of `a` and `b`, by characters.
fn distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// A value and how many carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Facet))]
pub struct Facet {
    /// The value, exactly as the filter takes it.
    pub name: String,
    /// How many articles carry it.
    pub count: u64,
}

/// `GET /v1/news/facets`: every category and tag the news holds, with how
/// many articles carry each, by count descending, then name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1NewsFacets))]
pub struct NewsFacets {
    /// The values of `category`.
    pub categories: Vec<Facet>,
    /// The values of `tag`.
    pub tags: Vec<Facet>,
}

impl NewsFacets {
    /// The hint of an empty news list page under `filter` ([`news_hint`]).
    pub fn hint(&self, filter: &NewsFilter) -> Option<Hint> {
        let of = |param: &str| if param == CATEGORY { &self.categories } else { &self.tags };
        news_hint(
            filter,
            |param, value| of(param).iter().any(|f| f.name == value),
            |param| of(param).iter().map(|f| f.name.as_str()),
        )
    }

    /// The facets of `categories` and `tags` as `(value, count)`, ordered.
    pub fn new<'a>(
        categories: impl IntoIterator<Item = (&'a str, u64)>,
        tags: impl IntoIterator<Item = (&'a str, u64)>,
    ) -> Self {
        let ordered = |values: &mut dyn Iterator<Item = (&'a str, u64)>| {
            let mut v: Vec<Facet> = values.map(|(name, count)| Facet { name: name.to_owned(), count }).collect();
            v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
            v
        };
        NewsFacets { categories: ordered(&mut categories.into_iter()), tags: ordered(&mut tags.into_iter()) }
    }
}

/// `GET /v1/industries`: the four-level classification (NSE's and BSE's
/// macro-economic sector, sector, industry, basic industry) with the
/// number of active companies at each node. Every active company is in
/// one path; a level it lacks is a node named `null`, so children's
/// counts add up to their parent's, and the macro-sectors' to `count`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Industries))]
pub struct Industries {
    /// Active companies, in all.
    pub count: u64,
    /// The macro-economic sectors.
    pub macro_sectors: Vec<MacroSector>,
}

/// A macro-economic sector (`Industrials`) and its sectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1MacroSector))]
pub struct MacroSector {
    /// Its name; `null` for companies without one.
    pub name: Option<String>,
    /// Active companies in it.
    pub count: u64,
    /// Its sectors.
    pub sectors: Vec<Sector>,
}

/// A sector (`Capital Goods`) and its industries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Sector))]
pub struct Sector {
    /// Its name, as a company's `sector` carries it; `null` for companies without one.
    pub name: Option<String>,
    /// Active companies in it.
    pub count: u64,
    /// Its industries.
    pub industries: Vec<Industry>,
}

/// An industry (`Electrical Equipment`), the value `GET
/// /v1/companies?industry=` takes, and its basic industries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Industry))]
pub struct Industry {
    /// Its name, as a company's `industry` carries it (and the `industry` filter takes it); `null` for companies without one.
    pub name: Option<String>,
    /// Active companies in it.
    pub count: u64,
    /// Its basic industries.
    pub basic_industries: Vec<BasicIndustry>,
}

/// A basic industry (`Heavy Electrical Equipment`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1BasicIndustry))]
pub struct BasicIndustry {
    /// Its name; `null` for companies without one.
    pub name: Option<String>,
    /// Active companies in it.
    pub count: u64,
}

/// A company's four levels: macro-sector, sector, industry, basic industry.
pub type Levels<'a> = [Option<&'a str>; 4];

impl Industries {
    /// The tree of the active companies' levels, each path given with how
    /// many companies have it (a path may be given more than once).
    pub fn of<'a>(paths: impl IntoIterator<Item = (Levels<'a>, u64)>) -> Self {
        use std::collections::BTreeMap;
        type Tree<'a> = BTreeMap<
            Option<&'a str>,
            BTreeMap<Option<&'a str>, BTreeMap<Option<&'a str>, BTreeMap<Option<&'a str>, u64>>>,
        >;
        let mut tree: Tree<'a> = BTreeMap::new();
        let mut count = 0;
        for ([m, s, i, b], n) in paths {
            *tree.entry(m).or_default().entry(s).or_default().entry(i).or_default().entry(b).or_default() += n;
            count += n;
        }
        let name = |n: Option<&str>| n.map(str::to_owned);
        let mut macro_sectors: Vec<MacroSector> = tree
            .into_iter()
            .map(|(m, sectors)| {
                let mut sectors: Vec<Sector> = sectors
                    .into_iter()
                    .map(|(s, industries)| {
                        let mut industries: Vec<Industry> = industries
                            .into_iter()
                            .map(|(i, basics)| {
                                let mut basic_industries: Vec<BasicIndustry> = basics
                                    .into_iter()
                                    .map(|(b, count)| BasicIndustry { name: name(b), count })
                                    .collect();
                                sort(&mut basic_industries, |b| (b.count, &b.name));
                                let count = basic_industries.iter().map(|b| b.count).sum();
                                Industry { name: name(i), count, basic_industries }
                            })
                            .collect();
                        sort(&mut industries, |i| (i.count, &i.name));
                        Sector { name: name(s), count: industries.iter().map(|i| i.count).sum(), industries }
                    })
                    .collect();
                sort(&mut sectors, |s| (s.count, &s.name));
                MacroSector { name: name(m), count: sectors.iter().map(|s| s.count).sum(), sectors }
            })
            .collect();
        sort(&mut macro_sectors, |m| (m.count, &m.name));
        Industries { count, macro_sectors }
    }
}

/// Sorts nodes by count descending, then name, an unknown (`None`) name last.
fn sort<T>(nodes: &mut [T], key: impl Fn(&T) -> (u64, &Option<String>)) {
    nodes.sort_by(|a, b| {
        let ((ca, na), (cb, nb)) = (key(a), key(b));
        (na.is_none(), Reverse(ca), na).cmp(&(nb.is_none(), Reverse(cb), nb))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_prefers_case_then_containment_then_edits_then_words() {
        let existing = [
            "Banks",
            "Private Sector Bank",
            "Software & Services",
            "IT - Software",
            "Pharmaceuticals",
            "Cement & Cement Products",
            "Other Banks",
        ];
        assert_eq!(nearest("banks", existing), ["Banks", "Other Banks", "Private Sector Bank"]);
        assert_eq!(nearest("Sofware", existing), ["IT - Software", "Software & Services"]);
        assert_eq!(nearest("Pharmaceutical", existing), ["Pharmaceuticals"]);
        assert_eq!(nearest("Pharmacuticals", existing), ["Pharmaceuticals"]);
        assert_eq!(nearest("Cement Products", existing), ["Cement & Cement Products"]);
        assert_eq!(nearest("Private Bank", existing)[0], "Private Sector Bank", "both words");
        assert!(nearest("Aerospace", existing).is_empty(), "a far value is not named");
        let many: Vec<String> = (0..20).map(|i| format!("Bank {i}")).collect();
        assert_eq!(nearest("bank", many.iter().map(String::as_str)).len(), HINT_MAX);
    }

    #[test]
    fn distance_counts_edits_by_character() {
        let d = |a: &str, b: &str| distance(&a.chars().collect::<Vec<_>>(), &b.chars().collect::<Vec<_>>());
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("é", "e"), 1);
        assert_eq!(d("same", "same"), 0);
    }

    #[test]
    fn the_tree_adds_up_and_orders_by_count_then_name_unknown_last() {
        let ind = |m, s, i, b| [Some(m), Some(s), Some(i), b];
        let tree = Industries::of([
            (ind("Financials", "Banks", "Banks", Some("Private Bank")), 3),
            (ind("Financials", "Banks", "Banks", Some("Public Bank")), 3),
            (ind("Energy", "Oil", "Refineries", None), 1),
            ([None, None, None, None], 2),
            (ind("Energy", "Oil", "Refineries", None), 1),
        ]);
        assert_eq!(tree.count, 10);
        let names: Vec<_> = tree.macro_sectors.iter().map(|m| (m.name.as_deref(), m.count)).collect();
        assert_eq!(names, [(Some("Financials"), 6), (Some("Energy"), 2), (None, 2)]);
        let banks = &tree.macro_sectors[0].sectors[0].industries[0];
        assert_eq!(banks.count, 6);
        let basics: Vec<_> = banks.basic_industries.iter().map(|b| b.name.as_deref()).collect();
        assert_eq!(basics, [Some("Private Bank"), Some("Public Bank")], "a tie by name");
    }

    #[test]
    fn facets_order_by_count_then_name() {
        let f = NewsFacets::new([("b", 1), ("a", 1), ("c", 5)], [("t", 2)]);
        let names: Vec<_> = f.categories.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(f.tags, [Facet { name: "t".into(), count: 2 }]);
    }
}
