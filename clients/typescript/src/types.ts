/**
 * Friendly names for the wire types. Every type here is an alias of one in
 * `generated/openapi.ts`, which `npm run generate` writes from the service's
 * OpenAPI document (`docs/openapi.json`): nothing is declared twice.
 *
 * @module
 */
import type { components, operations } from "./generated/openapi.js";

type Schemas = components["schemas"];

/** One company (security) as the list shows it, keyed by ISIN. */
export type Company = Schemas["V1Company"];
/** One company with its listings, classification, market cap and `updated_at`. */
export type CompanyDetail = Schemas["V1CompanyDetail"];
/** One exchange listing of a company. */
export type Listing = Schemas["Listing"];
/** The four classification levels NSE and BSE share. */
export type Classification = Schemas["Classification"];
/** A market capitalisation and the day it was taken. */
export type MarketCap = Schemas["MarketCap"];
/** `bse` or `nse`. */
export type Exchange = Schemas["Exchange"];
/** `large_cap`, `mid_cap` or `small_cap`. */
export type MarketCapBand = Schemas["MarketCapBand"];
/** A news article with its body (`GET /v1/news/{slug}`). */
export type Article = Schemas["Article"];
/** A news article as the list shows it: every field but `body`. */
export type ArticleSummary = Schemas["V1ArticleSummary"];
/** The calling key's tier, limits and monthly usage (`GET /v1/usage`). */
export type Usage = Schemas["V1Usage"];
/** Usage in one billing month. */
export type UsageWindow = Schemas["V1UsageWindow"];
/** One month of usage, day by day (`GET /v1/usage/daily`). */
export type UsageDaily = Schemas["V1UsageDaily"];
/** One day of usage. */
export type UsageDay = Schemas["V1UsageDay"];
/** An RFC 9457 problem body, as every error answer carries. */
export type Problem = Schemas["Problem"];
/** One page of `GET /v1/companies`. */
export type CompanyPage = Schemas["V1CompanyPage"];
/** One page of `GET /v1/news`. */
export type NewsPage = Schemas["V1NewsPage"];
/** One page of `GET /v1/companies/changes`, with `sync_token` on the last. */
export type ChangesPage = Schemas["V1ChangesPage"];

/** `GET /v1/companies/{isin}/history`: an ISIN's identity events, oldest first. */
export type CompanyHistory = Schemas["V1CompanyHistory"];
/** One identity event: `listed`, `symbol_changed`, `name_changed`, `isin_changed` or `delisted`. */
export type IdentityEvent = CompanyHistory["events"][number];
/** `GET /v1/symbols/{symbol}`: every ISIN that carried the symbol, current first. */
export type SymbolHistory = Schemas["V1SymbolHistory"];
/** One corporate action (contract 13.2): its `type` and the type's own object with its figures. */
export type CorporateAction = Schemas["V1CorporateAction"];
/** One page of `GET /v1/actions`, the calendar, `ex_date` ascending. */
export type ActionPage = Schemas["V1ActionPage"];
/** `GET /v1/companies/{isin}/actions`: a company's actions (with its lineage's), `ex_date` descending. */
export type CompanyActions = Schemas["V1CompanyActions"];
/** `type`, `from`, `to` and `lineage` of `GET /v1/companies/{isin}/actions`. */
export type CompanyActionsQuery = NonNullable<operations["listCompanyActions"]["parameters"]["query"]>;
/** One end-of-day bar (contract 14.2): prices in rupees as published, or adjusted to four decimals. */
export type Bar = Schemas["V1Bar"];
/** `GET /v1/companies/{isin}/prices`: the bars, oldest first, adjusted as `adjust` says, with the `adjustments` applied. */
export type CompanyPrices = Schemas["V1CompanyPrices"];
/** `from`, `to`, `adjust` and `lineage` of `GET /v1/companies/{isin}/prices`. */
export type CompanyPricesQuery = NonNullable<operations["listCompanyPrices"]["parameters"]["query"]>;
/** One page of `GET /v1/prices`: the market on `date`, by ISIN then series. */
export type MarketDay = Schemas["V1MarketDay"];
/** `date`, `series`, `cursor` and `limit` of `GET /v1/prices`. */
export type MarketDayQuery = NonNullable<operations["listMarketPrices"]["parameters"]["query"]>;
/** The filters of `GET /v1/actions` (and `cursor`, `limit`). */
export type ActionsQuery = NonNullable<operations["listActions"]["parameters"]["query"]>;
/** `as_of` of `GET /v1/companies/{isin}`. */
export type CompanyQuery = NonNullable<operations["getCompany"]["parameters"]["query"]>;
/** `exchange` of `GET /v1/symbols/{symbol}`. */
export type SymbolQuery = NonNullable<operations["getSymbol"]["parameters"]["query"]>;
/** The order of a company search: `relevance` (the default with `search`, which it needs) or `ticker`. */
export type CompanySort = "relevance" | "ticker";
/**
 * The filters of `GET /v1/companies` (and `cursor`, `limit`), with `sort` narrowed to {@link CompanySort}
 * (the document states it as a string with a pattern).
 */
export type CompaniesQuery = Omit<NonNullable<operations["listCompanies"]["parameters"]["query"]>, "sort"> & {
  sort?: CompanySort;
};
/** A row of the company list: every {@link Company} field, and on each result of a search its `match`. */
export type CompanyListItem = Schemas["V1CompanyListItem"];
/** What a search matched in a company: `field` (`ticker`, `name`, `former_ticker`, `former_name`) and `value`. */
export type SearchMatch = Schemas["V1SearchMatch"];
/** The order of a news search: `relevance` (BM25, the default with `q`, which it needs) or `published_at` (newest first). */
export type NewsSort = "relevance" | "published_at";
/**
 * The filters of `GET /v1/news` (and `cursor`, `limit`): `isin`, `ticker`, `category`, `tag`, the publication
 * window, and `q` (full-text search: words, `"a phrase"`, `prefix*`), with `sort` narrowed to {@link NewsSort}
 * (the document states it as a string with a pattern).
 */
export type NewsQuery = Omit<NonNullable<operations["listNews"]["parameters"]["query"]>, "sort"> & {
  sort?: NewsSort;
};
/** `since`, `cursor` and `limit` of `GET /v1/companies/changes`. */
export type ChangesQuery = NonNullable<operations["listCompanyChanges"]["parameters"]["query"]>;
/** `month` (`YYYY-MM`) of `GET /v1/usage/daily`. */
export type UsageDailyQuery = NonNullable<operations["getUsageDaily"]["parameters"]["query"]>;

/** What a `company.changed` event carries: the company after the change, the fields that changed, the identity events it gained. */
export type CompanyChanged = Schemas["V1CompanyChanged"];
/** What a `corporate_action.removed` event carries: the action as last stored and the ids that replace it. */
export type CorporateActionRemoved = Schemas["V1CorporateActionRemoved"];
/** What a `prices.published` event carries: the day, its exchange and how many bars it now holds. */
export type PricesPublished = Schemas["V1PricesPublished"];
/** An event of type `T` whose `data` is `D` (the document types `data` only as an object). */
export type EventOf<T extends string, D> = Omit<Schemas["V1Event"], "type" | "data"> & { type: T; data: D };
/**
 * One event of the log or the stream (`V1Event`), its `data` typed by its
 * `type`: narrow with `if (e.type === "company.changed") e.data.company…`.
 */
export type Event =
  | EventOf<"article.published" | "article.updated", ArticleSummary>
  | EventOf<"company.changed", CompanyChanged>
  | EventOf<"corporate_action.added" | "corporate_action.changed", CorporateAction>
  | EventOf<"corporate_action.removed", CorporateActionRemoved>
  | EventOf<"prices.published", PricesPublished>
  | EventOf<"ping", Record<string, never>>;
/** One page of `GET /v1/events`, oldest first. */
export type EventPage = Omit<Schemas["V1EventPage"], "data"> & { data: Event[] };
/** The query of `GET /v1/events` as sent (`types` comma-separated). */
export type EventsWireQuery = NonNullable<operations["listEvents"]["parameters"]["query"]>;
/** The filters of `GET /v1/events` (and `since`, `cursor`, `limit`); `types` an array or a comma-separated list. */
export type EventsQuery = Omit<EventsWireQuery, "types"> & { types?: string | readonly string[] };
/**
 * The filters of `GET /v1/events/stream`, and `since`: the event id to
 * resume after (sent as `Last-Event-ID`; none: from the next event committed).
 */
export type EventStreamQuery = Omit<NonNullable<operations["streamEvents"]["parameters"]["query"]>, "types"> & {
  types?: string | readonly string[];
};

/** A webhook endpoint (contract 11.2). */
export type WebhookEndpoint = Schemas["V1WebhookEndpoint"];
/** An endpoint with its signing `secret`: the answer of a create and of a rotation, the only times it is shown. */
export type WebhookEndpointWithSecret = Schemas["V1WebhookEndpointWithSecret"];
/** One delivery attempt: the receiver's `status`, or the `error` before one. */
export type WebhookAttempt = Schemas["V1WebhookAttempt"];
/** The body of `POST /v1/webhooks`. */
export type WebhookCreate = Schemas["V1WebhookCreate"];
/** The body of `PATCH /v1/webhooks/{id}`: the fields given change. */
export type WebhookUpdate = Schemas["V1WebhookUpdate"];
