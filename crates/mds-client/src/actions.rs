//! Corporate actions (contract 13.3): a company's actions with its lineage
//! ([`CompanyActionsRequest`], `GET /v1/companies/{isin}/actions`) and the
//! calendar's filters ([`ActionsRequest`], `GET /v1/actions`; one page,
//! every page or every action as every list request has them).
//!
//! The parameter names and the wire records ([`CorporateAction`],
//! [`CompanyActions`]) are those of [`mds_domain::action_query`] and
//! [`mds_domain::actions`], the definitions the server parses and writes
//! with. Days and types are typed and sent in the wire format.

use chrono::NaiveDate;
use mds_domain::Exchange;
use mds_domain::action_query::{CompanyActions, EX_DATE_FROM, EX_DATE_TO, TYPE};
use mds_domain::actions::{ActionType, CorporateAction};
use mds_domain::params::EXCHANGE;

use crate::list::ListRequest;
use crate::part::{CompanyRequest, day};

/// A `GET /v1/actions` request: the calendar, `ex_date` ascending, then
/// `id`; filters combine with AND.
///
/// ```no_run
/// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
/// use chrono::NaiveDate;
/// let from = NaiveDate::from_ymd_opt(2026, 7, 1).unwrap();
/// let week = client.actions().ex_date_from(from).ex_date_to(from + chrono::Days::new(6)).all().await?;
/// for a in &week {
///     println!("{} {} {:?}", a.ex_date, a.symbol, a.action.action_type());
/// }
/// # Ok(()) }
/// ```
pub type ActionsRequest = ListRequest<CorporateAction>;

/// The filters of `GET /v1/actions`.
impl ActionsRequest {
    /// Ex-dates on or after this day.
    pub fn ex_date_from(self, d: NaiveDate) -> Self {
        self.set(EX_DATE_FROM, day(d))
    }

    /// Ex-dates on or before this day (not before
    /// [`ex_date_from`](Self::ex_date_from)).
    pub fn ex_date_to(self, d: NaiveDate) -> Self {
        self.set(EX_DATE_TO, day(d))
    }

    /// Only actions of this type.
    pub fn action_type(self, t: ActionType) -> Self {
        self.set(TYPE, t.as_str().to_owned())
    }

    /// Only actions this exchange published (one both published passes
    /// either).
    pub fn exchange(self, e: Exchange) -> Self {
        self.set(EXCHANGE, e.as_str().to_owned())
    }
}

/// A `GET /v1/companies/{isin}/actions` request: the company's actions,
/// `ex_date` descending, with (by default) those of the ISINs it
/// superseded.
///
/// ```no_run
/// # async fn example(client: mds_client::Client) -> Result<(), mds_client::Error> {
/// use mds_client::ActionType;
/// let splits = client.company_actions("INE296A01032").action_type(ActionType::Split).send().await?;
/// for a in &splits.data {
///     println!("{} {} factor {:?}", a.ex_date, a.isin, a.factor);
/// }
/// # Ok(()) }
/// ```
pub type CompanyActionsRequest = CompanyRequest<CompanyActions>;

/// The filter of `GET /v1/companies/{isin}/actions` beyond the span and
/// lineage ([`CompanyRequest`]).
impl CompanyActionsRequest {
    /// Only actions of this type.
    pub fn action_type(self, t: ActionType) -> Self {
        self.set(TYPE, t.as_str().to_owned())
    }
}
