//! Corporate actions (contract section 13.2): the wire record of one
//! action ([`CorporateAction`]), its type and typed figures ([`Action`]),
//! its stable id ([`ActionId`]) and the price adjustment factor the
//! figures alone give ([`Action::factor`]).
//!
//! Figures are read from the exchanges' free text, so each one is `null`
//! when the text does not give it ("Interim Dividend" with no amount). Money
//! (amounts, prices, face values) is `f64`, INR as published (two to four
//! decimals, well within an `f64`'s exact range for such values); ratios
//! are whole numbers of shares.

use std::fmt::Write as _;
use std::str::FromStr;

use chrono::NaiveDate;
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};

use crate::company::{Exchange, Ticker};
use crate::event::{EventDraft, EventSubject, EventType};
use crate::isin::Isin;

/// Who published an action: NSE or BSE (the exchanges of section 4).
pub type Source = Exchange;

wire_enum!(
    /// What kind of action, `type` on the wire.
    ActionType, "type must be one of dividend, bonus, split, consolidation, rights, buyback, demerger, other (got {:?})", {
        /// A cash dividend.
        Dividend => "dividend",
        /// A bonus issue of shares.
        Bonus => "bonus",
        /// A split (sub-division) of the face value.
        Split => "split",
        /// A consolidation of shares (a higher face value).
        Consolidation => "consolidation",
        /// A rights issue of shares.
        Rights => "rights",
        /// A buyback of shares.
        Buyback => "buyback",
        /// A demerger (spin-off).
        Demerger => "demerger",
        /// Anything else the exchange published (meetings, fund and debt
        /// payments, schemes of arrangement), kept with its text.
        Other => "other",
    }
);

wire_enum!(
    /// Which dividend: `kind` of a `dividend`.
    DividendKind, "kind must be one of interim, final, special (got {:?})", {
        /// An interim dividend.
        Interim => "interim",
        /// A final dividend.
        Final => "final",
        /// A special dividend.
        Special => "special",
    }
);

/// The figures of a `dividend`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Dividend))]
pub struct Dividend {
    /// INR per share; `null` when the text gives no amount.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub amount: Option<f64>,
    /// `interim`, `final`, `special`, or `null` when the text does not say.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub kind: Option<DividendKind>,
}

/// The figures of a `bonus`: `ratio_new` new shares for every `ratio_held`
/// held ("Bonus 1:2" = 1 new for every 2 held).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Bonus))]
pub struct Bonus {
    /// New shares, per `ratio_held`; `null` when the text gives no ratio.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub ratio_new: Option<u32>,
    /// Shares held, per `ratio_new`; `null` when the text gives no ratio.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub ratio_held: Option<u32>,
}

/// The figures of a `rights` issue.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Rights))]
pub struct Rights {
    /// New shares offered, per `ratio_held`; `null` when not given.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub ratio_new: Option<u32>,
    /// Shares held, per `ratio_new`; `null` when not given.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub ratio_held: Option<u32>,
    /// INR a share: face value + premium; `null` when either is unknown.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub price: Option<f64>,
}

/// The figures of a `split` or a `consolidation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1FaceValueChange))]
pub struct FaceValueChange {
    /// Face value before, INR; `null` when not given.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub face_value_from: Option<f64>,
    /// Face value after, INR; `null` when not given.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub face_value_to: Option<f64>,
    /// The ISIN the security moved to with it, when it changed.
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<String>))]
    pub new_isin: Option<Isin>,
}

/// The figures of a `buyback`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1Buyback))]
pub struct Buyback {
    /// INR a share; `null` when not given.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub price: Option<f64>,
}

/// An action's type with its own object: `{"type": "split", "split": {...}}`
/// on the wire (`demerger` and `other` have none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1ActionFigures))]
pub enum Action {
    /// A cash dividend.
    Dividend {
        /// Its figures.
        dividend: Dividend,
    },
    /// A bonus issue.
    Bonus {
        /// Its figures.
        bonus: Bonus,
    },
    /// A split of the face value.
    Split {
        /// Its figures.
        split: FaceValueChange,
    },
    /// A consolidation of shares.
    Consolidation {
        /// Its figures.
        consolidation: FaceValueChange,
    },
    /// A rights issue.
    Rights {
        /// Its figures.
        rights: Rights,
    },
    /// A buyback.
    Buyback {
        /// Its figures.
        buyback: Buyback,
    },
    /// A demerger.
    Demerger,
    /// Anything else.
    Other,
}

impl Action {
    /// Its `type`.
    pub fn action_type(&self) -> ActionType {
        match self {
            Action::Dividend { .. } => ActionType::Dividend,
            Action::Bonus { .. } => ActionType::Bonus,
            Action::Split { .. } => ActionType::Split,
            Action::Consolidation { .. } => ActionType::Consolidation,
            Action::Rights { .. } => ActionType::Rights,
            Action::Buyback { .. } => ActionType::Buyback,
            Action::Demerger => ActionType::Demerger,
            Action::Other => ActionType::Other,
        }
    }

    /// The price adjustment factor the figures alone give ([`round_factor`]):
    /// split and consolidation `to / from`, bonus `held / (held + new)`; `None` for the
    /// others (a dividend's and a rights issue's need a close) and when a
    /// figure is missing.
    pub fn factor(&self) -> Option<f64> {
        match self {
            Action::Split { split: f } | Action::Consolidation { consolidation: f } => {
                match (f.face_value_from, f.face_value_to) {
                    (Some(from), Some(to)) if from > 0.0 && to > 0.0 => Some(round_factor(to / from)),
                    _ => None,
                }
            }
            Action::Bonus { bonus } => match (bonus.ratio_new, bonus.ratio_held) {
                (Some(new), Some(held)) if held > 0 => {
                    Some(round_factor(f64::from(held) / (f64::from(held) + f64::from(new))))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether a type that has figures was published without any ("Right
    /// Issue of Equity Shares"): such a publication disagrees with no
    /// figures of the same action (see the import's merge).
    pub fn lacks_figures(&self) -> bool {
        match self {
            Action::Dividend { dividend } => dividend.amount.is_none(),
            Action::Bonus { bonus } => bonus.ratio_new.is_none() && bonus.ratio_held.is_none(),
            Action::Split { split: f } | Action::Consolidation { consolidation: f } => {
                f.face_value_from.is_none() && f.face_value_to.is_none()
            }
            Action::Rights { rights } => {
                rights.ratio_new.is_none() && rights.ratio_held.is_none() && rights.price.is_none()
            }
            Action::Buyback { buyback } => buyback.price.is_none(),
            Action::Demerger | Action::Other => false,
        }
    }

    /// The figures two publications of one action agree on (contract 13.1:
    /// amount, ratios, face values from and to, price), as text: a dividend's
    /// `kind` and a split's `new_isin` are left out. Numbers are written in
    /// Rust's shortest round-trip form, the same on every machine.
    pub fn figures_key(&self) -> String {
        fn num(out: &mut String, v: Option<f64>) {
            match v {
                // `+ 0.0` makes -0 and 0 one key.
                Some(v) => write!(out, "{}", v + 0.0).expect("writing to a String"),
                None => out.push('-'),
            }
            out.push(',');
        }
        fn int(out: &mut String, v: Option<u32>) {
            num(out, v.map(f64::from));
        }
        let mut out = String::new();
        match self {
            Action::Dividend { dividend } => num(&mut out, dividend.amount),
            Action::Bonus { bonus } => {
                int(&mut out, bonus.ratio_new);
                int(&mut out, bonus.ratio_held);
            }
            Action::Split { split: f } | Action::Consolidation { consolidation: f } => {
                num(&mut out, f.face_value_from);
                num(&mut out, f.face_value_to);
            }
            Action::Rights { rights } => {
                int(&mut out, rights.ratio_new);
                int(&mut out, rights.ratio_held);
                num(&mut out, rights.price);
            }
            Action::Buyback { buyback } => num(&mut out, buyback.price),
            Action::Demerger | Action::Other => {}
        }
        out
    }
}

impl CorporateAction {
    /// Takes in `other`, another publication of the same action (the same
    /// id): its sources, and what this one does not say (a record date, a
    /// dividend's kind, a split's new ISIN, [`Action::take_unsaid`]). The
    /// purpose is the first source's (in `sources` order: NSE's text when
    /// NSE published it), so the text kept does not depend on which
    /// publication was stored first.
    pub fn absorb(&mut self, other: &CorporateAction) {
        let first = |a: &CorporateAction| a.sources.iter().map(source_rank).min();
        if let Some(o) = first(other)
            && first(self).is_none_or(|s| o < s)
        {
            self.purpose.clone_from(&other.purpose);
        }
        for s in &other.sources {
            if !self.sources.contains(s) {
                self.sources.push(*s);
            }
        }
        sort_sources(&mut self.sources);
        self.record_date = self.record_date.or(other.record_date);
        self.action.take_unsaid(&other.action);
    }

    /// The draft of its `corporate_action.added` event (contract 13.3):
    /// `data` is the action, about its ISIN and symbol.
    pub fn added(&self) -> EventDraft {
        self.draft(EventType::CorporateActionAdded)
    }

    /// The draft of its `corporate_action.changed` event: `data` is the
    /// action as it now stands.
    pub fn changed(&self) -> EventDraft {
        self.draft(EventType::CorporateActionChanged)
    }

    /// The draft of its `corporate_action.removed` event: `data` is the
    /// action as it was last stored and the ids of the actions its
    /// publications now belong to ([`ActionRemoved`]), about its own
    /// (former) ISIN and symbol.
    pub fn removed(&self, replaced_by: Vec<ActionId>) -> EventDraft {
        let data = ActionRemoved { action: self.clone(), replaced_by };
        self.draft_with(EventType::CorporateActionRemoved, serde_json::to_string(&data))
    }

    fn draft(&self, kind: EventType) -> EventDraft {
        self.draft_with(kind, serde_json::to_string(self))
    }

    fn draft_with(&self, kind: EventType, data: serde_json::Result<String>) -> EventDraft {
        EventDraft {
            kind,
            subject: EventSubject {
                isin: Some(self.isin.clone()),
                ticker: Some(self.symbol.as_str().to_owned()),
                tags: vec![],
            },
            data: data.expect("an action always serialises"),
        }
    }
}

/// The `data` of a `corporate_action.removed` event: a stored action
/// whose every publication was resolved again to another ISIN (a later
/// import dated the ISIN's change), so its id is gone; the same
/// publications now make the actions `replaced_by` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1CorporateActionRemoved))]
pub struct ActionRemoved {
    /// The action as it was last stored (its `id` no longer found).
    pub action: CorporateAction,
    /// The ids of the actions at the new ISIN that hold its publications,
    /// in ascending order: one, or two when NSE's and BSE's publications
    /// were resolved to different ISINs.
    pub replaced_by: Vec<ActionId>,
}

impl Action {
    /// Takes from `other` (the same action) what this one does not say: a
    /// dividend's kind, a split's or consolidation's new ISIN.
    pub fn take_unsaid(&mut self, other: &Action) {
        match (self, other) {
            (Action::Dividend { dividend: k }, Action::Dividend { dividend: o }) => k.kind = k.kind.or(o.kind),
            (Action::Split { split: k }, Action::Split { split: o })
            | (Action::Consolidation { consolidation: k }, Action::Consolidation { consolidation: o })
                if k.new_isin.is_none() =>
            {
                k.new_isin.clone_from(&o.new_isin);
            }
            _ => {}
        }
    }

    /// Names `next` as the ISIN a split or consolidation moved the
    /// security to, when it names none yet (other types: nothing).
    pub fn set_new_isin(&mut self, next: &Isin) {
        if let Some(n @ None) = self.new_isin_mut() {
            *n = Some(next.clone());
        }
    }

    /// Names `next` as the ISIN a split or consolidation moved the
    /// security to, in place of any it named (`None`: no ISIN named; other
    /// types: nothing).
    pub fn replace_new_isin(&mut self, next: Option<&Isin>) {
        if let Some(n) = self.new_isin_mut() {
            *n = next.cloned();
        }
    }

    /// A split's or consolidation's `new_isin`, to change.
    fn new_isin_mut(&mut self) -> Option<&mut Option<Isin>> {
        match self {
            Action::Split { split: f } | Action::Consolidation { consolidation: f } => Some(&mut f.new_isin),
            _ => None,
        }
    }

    /// The ISIN the security moved to with it (a split's or a
    /// consolidation's `new_isin`).
    pub fn new_isin(&self) -> Option<&Isin> {
        match self {
            Action::Split { split: f } | Action::Consolidation { consolidation: f } => f.new_isin.as_ref(),
            _ => None,
        }
    }
}

/// A factor rounded to 12 significant digits: more than any price needs,
/// and few enough that its JSON number reads back as the same `f64` (a
/// parser's exact path: at most 15 significant digits).
pub fn round_factor(factor: f64) -> f64 {
    format!("{factor:.11e}").parse().unwrap_or(factor)
}

/// An action's id, `ca_` and 16 lower-case hex digits: the first 8 bytes of
/// the SHA-256 of its ISIN, type, ex-date and figures
/// ([`Action::figures_key`]), so the same on every import and every node.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActionId(String);

/// Why a text is not an [`ActionId`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an action id is ca_ and 16 lower-case hex digits")]
pub struct ActionIdError;

impl ActionId {
    /// The id of the action of `isin` going ex on `ex_date`.
    pub fn of(isin: &Isin, ex_date: NaiveDate, action: &Action) -> Self {
        let mut hash = Sha256::new();
        for part in [isin.as_str(), action.action_type().as_str(), &ex_date.to_string(), &action.figures_key()] {
            hash.update(part.as_bytes());
            hash.update([0u8]);
        }
        ActionId(format!("ca_{}", crate::hex::encode(&hash.finalize()[..8])))
    }

    /// Checks the text of an id.
    pub fn parse(s: &str) -> Result<Self, ActionIdError> {
        match s.strip_prefix("ca_") {
            Some(hex) if hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) => {
                Ok(ActionId(s.to_owned()))
            }
            _ => Err(ActionIdError),
        }
    }
}

text_newtype!(ActionId, |e: ActionIdError, s: &str| format!("{e} (got {s:?})"));

#[cfg(feature = "openapi")]
string_schema!(ActionId, "A corporate action's id.", "^ca_[0-9a-f]{16}$", 19, 19, "ca_3f2a9c0d1e4b5a67");

/// One corporate action as the API serves it (contract 13.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = V1CorporateAction))]
pub struct CorporateAction {
    /// `ca_…`, stable across re-imports and nodes ([`ActionId::of`]).
    pub id: ActionId,
    /// The ISIN it applies to.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub isin: Isin,
    /// The ISIN's NSE symbol on the ex-date, else its BSE id.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub symbol: Ticker,
    /// The first day the shares trade without the entitlement.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub ex_date: NaiveDate,
    /// The record date; `null` when not published.
    #[cfg_attr(feature = "openapi", schema(required, value_type = Option<String>, format = Date))]
    pub record_date: Option<NaiveDate>,
    /// The exchange's own text, as published (the first source's).
    pub purpose: String,
    /// Who published it: `["nse"]`, `["bse"]` or `["nse", "bse"]`.
    pub sources: Vec<Source>,
    /// The price adjustment factor (contract 13.2); `null` until known.
    #[cfg_attr(feature = "openapi", schema(required))]
    pub factor: Option<f64>,
    /// The type and its own object.
    #[serde(flatten)]
    pub action: Action,
}

/// `sources` in their wire order: NSE first, then BSE, each once.
pub fn sort_sources(sources: &mut Vec<Source>) {
    sources.sort_by_key(source_rank);
    sources.dedup();
}

/// A source's place in `sources`: NSE, then BSE.
fn source_rank(s: &Source) -> u8 {
    match s {
        Exchange::Nse => 0,
        Exchange::Bse => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::day;

    fn canbk() -> CorporateAction {
        let isin = Isin::parse("INE476A01014").unwrap();
        let action = Action::Split {
            split: FaceValueChange {
                face_value_from: Some(10.0),
                face_value_to: Some(2.0),
                new_isin: Some(Isin::parse("INE476A01022").unwrap()),
            },
        };
        CorporateAction {
            id: ActionId::of(&isin, day("2024-05-15"), &action),
            isin,
            symbol: Ticker::parse("CANBK").unwrap(),
            ex_date: day("2024-05-15"),
            record_date: Some(day("2024-05-15")),
            purpose: "Face Value Split (Sub-Division) - From Rs 10/- Per Share To Rs 2/- Per Share".into(),
            sources: vec![Exchange::Nse, Exchange::Bse],
            factor: action.factor(),
            action,
        }
    }

    #[test]
    fn the_contract_example_round_trips() {
        let a = canbk();
        let json = serde_json::to_value(&a).unwrap();
        let expected = serde_json::json!({
            "id": a.id.as_str(), "isin": "INE476A01014", "symbol": "CANBK", "type": "split",
            "ex_date": "2024-05-15", "record_date": "2024-05-15",
            "purpose": "Face Value Split (Sub-Division) - From Rs 10/- Per Share To Rs 2/- Per Share",
            "sources": ["nse", "bse"], "factor": 0.2,
            "split": {"face_value_from": 10.0, "face_value_to": 2.0, "new_isin": "INE476A01022"}
        });
        assert_eq!(json, expected);
        let back: CorporateAction = serde_json::from_value(json).unwrap();
        assert_eq!(back, a);
    }

    #[test]
    fn its_events_carry_the_action_about_its_isin_and_symbol() {
        let a = canbk();
        let (added, changed) = (a.added(), a.changed());
        assert_eq!((added.kind, changed.kind), (EventType::CorporateActionAdded, EventType::CorporateActionChanged));
        assert_eq!(added.subject.isin.as_ref(), Some(&a.isin));
        assert_eq!(added.subject.ticker.as_deref(), Some("CANBK"));
        let data: CorporateAction = serde_json::from_str(&changed.data).unwrap();
        assert_eq!(data, a);
        let other = ActionId::parse("ca_0123456789abcdef").unwrap();
        let removed = a.removed(vec![other.clone()]);
        assert_eq!((removed.kind, removed.subject), (EventType::CorporateActionRemoved, added.subject));
        let data: serde_json::Value = serde_json::from_str(&removed.data).unwrap();
        assert_eq!(data["replaced_by"], serde_json::json!([other.as_str()]));
        assert_eq!(serde_json::from_value::<CorporateAction>(data["action"].clone()).unwrap(), a);
    }

    #[test]
    fn demerger_and_other_have_no_object() {
        let mut a = canbk();
        a.action = Action::Other;
        a.factor = None;
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["type"], "other");
        assert!(json.get("split").is_none());
        assert_eq!(serde_json::from_value::<CorporateAction>(json).unwrap(), a);
    }

    #[test]
    fn factors_read_back_from_json_as_the_same_number() {
        for (new, held) in [(1, 10), (3, 7), (1, 3), (13, 17)] {
            let f = Action::Bonus { bonus: Bonus { ratio_new: Some(new), ratio_held: Some(held) } }.factor().unwrap();
            let back: f64 = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
            assert_eq!(back.to_bits(), f.to_bits(), "{new}:{held}");
        }
    }

    #[test]
    fn factors() {
        let bonus = Action::Bonus { bonus: Bonus { ratio_new: Some(4), ratio_held: Some(1) } };
        assert_eq!(bonus.factor(), Some(0.2));
        let div = Action::Dividend { dividend: Dividend { amount: Some(5.0), kind: None } };
        assert_eq!(div.factor(), None);
        let open = Action::Split {
            split: FaceValueChange { face_value_from: None, face_value_to: Some(1.0), new_isin: None },
        };
        assert_eq!(open.factor(), None);
    }

    #[test]
    fn ids_ignore_kind_and_new_isin_and_see_the_figures() {
        let isin = Isin::parse("INE476A01014").unwrap();
        let d = |amount, kind| Action::Dividend { dividend: Dividend { amount: Some(amount), kind } };
        let a = ActionId::of(&isin, day("2024-05-15"), &d(1.0, None));
        assert_eq!(a, ActionId::of(&isin, day("2024-05-15"), &d(1.0, Some(DividendKind::Final))));
        assert_ne!(a, ActionId::of(&isin, day("2024-05-15"), &d(1.5, None)));
        assert_ne!(a, ActionId::of(&isin, day("2024-05-16"), &d(1.0, None)));
        assert_eq!(ActionId::parse(a.as_str()), Ok(a.clone()));
        assert!(ActionId::parse("ca_12").is_err());
        // Pinned: the id must not change between releases.
        assert_eq!(ActionId::of(&isin, day("2024-05-15"), &d(1.0, None)).as_str(), "ca_3e236550eac0f194");
    }
}
