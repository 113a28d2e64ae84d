/**
 * The client: `new Client({ apiKey, baseUrl })`, and one resource object per
 * part of the API (`companies`, `symbols`, `actions`, `news`, `events`, `usage`). Each method is one line
 * over {@link Http.get} or {@link PagedList}, typed by the route it calls.
 *
 * @module
 */
import { ConfigurationError, SyncTokenExpiredError } from "./errors.js";
import { EventsResource } from "./events.js";
import { Http } from "./http.js";
import { type WithMeta, withMeta } from "./meta.js";
import { PagedList, type WalkOptions } from "./pagination.js";
import { type RetryOptions, RetryPolicy } from "./retry.js";
import type {
  Article,
  ChangesPage,
  ChangesQuery,
  CompanyActions,
  CompanyActionsQuery,
  CompanyDetail,
  CompanyHistory,
  CompanyPrices,
  CompanyPricesQuery,
  CompanyQuery,
  MarketDay,
  MarketDayQuery,
  SymbolHistory,
  SymbolQuery,
  Usage,
  UsageDaily,
  UsageDailyQuery,
  WebhookAttempt,
  WebhookCreate,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookUpdate,
} from "./types.js";

/** The package's version. */
export const VERSION = "0.1.0";

/** Where the service runs when neither `baseUrl` nor `MDS_BASE_URL` says. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

/** Options of {@link Client}; all optional. */
export interface ClientOptions {
  /** The API key (`mds_live_…`); in Node, `MDS_API_KEY` when not given. */
  apiKey?: string;
  /** Where the service runs; in Node, `MDS_BASE_URL` when not given, else `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** Retries of `429`, `503` and connection failures (see {@link RetryOptions}). */
  retry?: RetryOptions | RetryPolicy;
  /** Milliseconds one attempt may take before it fails with a `TransportError`. Default 30,000. */
  timeout?: number;
  /** The `fetch` to use (a proxy-aware one, a test double); default the global `fetch`. */
  fetch?: typeof fetch;
  /** Told about each retry, one line each (e.g. `console.warn`); the key is never in it. */
  logger?: (message: string) => void;
  /** Headers added to every request. `Authorization` is refused: pass `apiKey`. */
  headers?: Record<string, string>;
}

/** Per-request options: an `AbortSignal`. */
export interface RequestOptions {
  /** Aborts the request (and any wait before a retry). */
  signal?: AbortSignal;
}

/** Where {@link CompaniesResource.sync} keeps its copy: a `Map` will do. */
export interface SyncStore {
  /** Insert or replace a company. */
  set(isin: string, company: CompanyDetail): unknown;
  /** Remove every company (before a sync from scratch). */
  clear(): unknown;
}

/** What one {@link CompaniesResource.sync} did. */
export interface SyncResult {
  /** Pass it as `since` next time; store it after the copy, so a failed run is simply run again. */
  syncToken: string;
  /** The companies created or changed since the token, in change order (every one when from scratch). */
  changed: CompanyDetail[];
  /** Whether the walk started from nothing: no token given, or the token had expired. */
  fromScratch: boolean;
  /** Whether the token given was refused with `410 sync_token_expired` (the store was cleared). */
  tokenExpired: boolean;
}

function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const v = proc?.env?.[name];
  return v === "" ? undefined : v;
}

const inspectSymbol = Symbol.for("nodejs.util.inspect.custom");

/**
 * A client of the mds API. The key lives in a closure inside a private
 * field: it is in no property, and `toString`, `toJSON` and `util.inspect`
 * show `apiKey: '***'`.
 *
 * ```ts
 * const client = new Client(); // MDS_API_KEY, MDS_BASE_URL
 * for await (const c of client.companies.iter({ exchange: "nse" })) console.log(c.ticker);
 * ```
 */
export class Client {
  /** The base URL requests go to (no trailing `/`). */
  readonly baseUrl: string;
  /** `/v1/companies`, `/v1/companies/{isin}`, `/v1/companies/changes`. */
  readonly companies: CompaniesResource;
  /** Symbols over time (`GET /v1/symbols/{symbol}`). */
  readonly symbols: SymbolsResource;
  /** Corporate actions: the calendar (`/v1/actions`) and a company's (`/v1/companies/{isin}/actions`). */
  readonly actions: ActionsResource;
  /** `/v1/prices` (the market on a day), `/v1/companies/{isin}/prices`. */
  readonly prices: PricesResource;
  /** `/v1/news`, `/v1/news/{slug}`. */
  readonly news: NewsResource;
  /** The event log and stream: `/v1/events`, `/v1/events/stream`. */
  readonly events: EventsResource;
  /** `/v1/usage`, `/v1/usage/daily`. */
  readonly usage: UsageResource;
  /** The account's webhook endpoints: `/v1/webhooks…`. */
  readonly webhooks: WebhooksResource;
  readonly #http: Http;

  constructor(options: ClientOptions = {}) {
    const key = options.apiKey ?? env("MDS_API_KEY");
    if (!key) {
      throw new ConfigurationError("no API key: pass { apiKey } or set MDS_API_KEY");
    }
    // A header value fetch would refuse: its error message would quote the key.
    if (!/^[\x21-\x7e]+$/.test(key)) {
      throw new ConfigurationError("the API key holds characters an HTTP header cannot carry (white space?)");
    }
    const base = (options.baseUrl ?? env("MDS_BASE_URL") ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    let parsed: URL;
    try {
      parsed = new URL(base);
    } catch {
      throw new ConfigurationError(`baseUrl is not a URL: ${JSON.stringify(base)}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new ConfigurationError(`baseUrl must be http or https, not ${parsed.protocol}`);
    }
    const headers = { ...(options.headers ?? {}) };
    if (Object.keys(headers).some((h) => h.toLowerCase() === "authorization")) {
      throw new ConfigurationError("headers must not hold Authorization: pass { apiKey }");
    }
    const authorization = `Bearer ${key}`;
    this.baseUrl = base;
    this.#http = new Http({
      baseUrl: base,
      authorization: () => authorization,
      retry: options.retry instanceof RetryPolicy ? options.retry : new RetryPolicy(options.retry),
      timeout: options.timeout ?? 30_000,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      logger: options.logger,
      headers,
    });
    this.companies = new CompaniesResource(this.#http);
    this.symbols = new SymbolsResource(this.#http);
    this.actions = new ActionsResource(this.#http);
    this.prices = new PricesResource(this.#http);
    this.news = new NewsResource(this.#http);
    this.events = new EventsResource(this.#http);
    this.usage = new UsageResource(this.#http);
    this.webhooks = new WebhooksResource(this.#http);
  }

  /** `Client(baseUrl=…, apiKey=***)`: never the key. */
  toString(): string {
    return `Client(baseUrl=${this.baseUrl}, apiKey=***)`;
  }

  /** `{ baseUrl, apiKey: "***" }`: never the key. */
  toJSON(): { baseUrl: string; apiKey: string } {
    return { baseUrl: this.baseUrl, apiKey: "***" };
  }

  /** What Node's `util.inspect` and `console.log` show: never the key. */
  [inspectSymbol](): string {
    return this.toString();
  }
}

/**
 * Symbols over time: `get(symbol, { exchange })`, every ISIN that has
 * carried the symbol on the exchange (`nse` by default), current first; a
 * symbol never seen is a `NotFoundError`.
 */
export class SymbolsResource {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  /** Who carried `symbol`, and when. */
  get(symbol: string, query: SymbolQuery = {}, options: RequestOptions = {}): Promise<WithMeta<SymbolHistory>> {
    return this.#http.get("/v1/symbols/{symbol}", { path: { symbol }, query, signal: options.signal });
  }
}

/**
 * Companies: the list (`list`, `pages`, `iter`, `all` with its filters), one
 * company in detail (`get`), and the change feed (`changes`, `changesPages`,
 * `sync`). With `search` the list is ranked by relevance and each row carries
 * its `match`; `sort: "ticker"` keeps ticker order ({@link CompaniesQuery}).
 *
 * @example
 * const { data } = await client.companies.list({ search: "zomato", limit: 3 });
 * console.log(data[0].ticker, data[0].match?.field, data[0].match?.value); // ETERNAL former_name …
 */
export class CompaniesResource extends PagedList<"/v1/companies"> {
  readonly #http: Http;
  readonly #changes: PagedList<"/v1/companies/changes">;

  constructor(http: Http) {
    super(http, "/v1/companies");
    this.#http = http;
    this.#changes = new PagedList(http, "/v1/companies/changes");
  }

  /**
   * One company with its listings, classification, market cap and status
   * (any ISIN the service has known, superseded and delisted ones
   * included); with `as_of` (`YYYY-MM-DD`), as it stood that day. A
   * malformed or unknown ISIN, or one not listed on `as_of`, is a
   * `NotFoundError`.
   */
  get(isin: string, query: CompanyQuery = {}, options: RequestOptions = {}): Promise<WithMeta<CompanyDetail>> {
    return this.#http.get("/v1/companies/{isin}", { path: { isin }, query, signal: options.signal });
  }

  /** The identity events of an ISIN (listings, symbol, name and ISIN changes, delisting), oldest first. */
  history(isin: string, options: RequestOptions = {}): Promise<WithMeta<CompanyHistory>> {
    return this.#http.get("/v1/companies/{isin}/history", { path: { isin }, signal: options.signal });
  }

  /** One page of the change feed (`since`: a stored `sync_token`; none: every company). */
  changes(query: ChangesQuery = {}, options: WalkOptions = {}): Promise<WithMeta<ChangesPage>> {
    return this.#changes.list(query, options);
  }

  /** Every page of the change feed to its end; the last one carries `sync_token`. */
  changesPages(query: ChangesQuery = {}, options: WalkOptions = {}): AsyncGenerator<WithMeta<ChangesPage>> {
    return this.#changes.pages(query, options);
  }

  /**
   * Brings `store` (ISIN → company) up to date: walks the change feed from
   * `since` (none: every company) at 200 a page, upserting each company as
   * its page arrives, and returns the token to pass next time. After a `410
   * sync_token_expired` it clears the store and walks from scratch (and says
   * so in `tokenExpired`). Any other error is thrown; upserts are
   * idempotent, so running again from the same token is safe.
   */
  async sync(store: SyncStore, since?: string | null, options: WalkOptions = {}): Promise<SyncResult> {
    try {
      return await this.#walk(store, since ?? null, options);
    } catch (error) {
      if (!(error instanceof SyncTokenExpiredError) || since == null) throw error;
      store.clear();
      return { ...(await this.#walk(store, null, options)), tokenExpired: true };
    }
  }

  async #walk(store: SyncStore, since: string | null, options: WalkOptions): Promise<SyncResult> {
    const changed: CompanyDetail[] = [];
    const query: ChangesQuery = since === null ? { limit: 200 } : { since, limit: 200 };
    for await (const page of this.#changes.pages(query, options)) {
      for (const company of page.data) {
        store.set(company.isin, company);
        changed.push(company);
      }
      if (!page.has_more) {
        if (page.sync_token === null) throw new TypeError("the change feed's last page has no sync_token");
        return { syncToken: page.sync_token, changed, fromScratch: since === null, tokenExpired: false };
      }
    }
    throw new TypeError("the change feed ended without a last page");
  }
}

/**
 * Corporate actions: the calendar (`list`, `pages`, `iter`, `all`, `ex_date`
 * ascending, with `ex_date_from`, `ex_date_to`, `type`, `exchange`) and a
 * company's actions with its lineage (`ofCompany`).
 */
export class ActionsResource extends PagedList<"/v1/actions"> {
  readonly #http: Http;

  constructor(http: Http) {
    super(http, "/v1/actions");
    this.#http = http;
  }

  /**
   * The corporate actions of the company with `isin`, `ex_date` descending,
   * with (`lineage`, the default) those of the ISINs it superseded; `type`,
   * `from` and `to` (inclusive ex-dates) filter. A malformed or unknown ISIN
   * is a `NotFoundError`.
   */
  ofCompany(
    isin: string,
    query: CompanyActionsQuery = {},
    options: RequestOptions = {},
  ): Promise<WithMeta<CompanyActions>> {
    return this.#http.get("/v1/companies/{isin}/actions", { path: { isin }, query, signal: options.signal });
  }
}

/**
 * End-of-day prices (contract 14.2): the market on one day (`list`, `pages`,
 * `iter`, `all` with its `date`, by ISIN then series, `series` filtering;
 * `marketDay` is `list`) and a company's series (`ofCompany`).
 */
export class PricesResource extends PagedList<"/v1/prices"> {
  readonly #http: Http;

  constructor(http: Http) {
    super(http, "/v1/prices");
    this.#http = http;
  }

  /**
   * One page of the market on `date` (`YYYY-MM-DD`): every bar of the day as
   * published (of one `series` if asked), by ISIN then series; pass
   * `next_cursor` back as `cursor` for the next page, or walk the day with
   * `iter({ date })` / `all({ date })`.
   */
  marketDay(
    date: string,
    query: Omit<MarketDayQuery, "date"> = {},
    options: WalkOptions = {},
  ): Promise<WithMeta<MarketDay>> {
    return this.list({ ...query, date }, options);
  }

  /**
   * The end-of-day bars of the company with `isin`, oldest first, `from` to
   * `to` (inclusive; the last day loaded and a year before it by default),
   * adjusted as `adjust` says (`split` by default: `none`, `split`, `total`),
   * continued (`lineage`, the default) through the ISINs it superseded, with
   * every adjustment applied listed. An unknown ISIN is a `NotFoundError`.
   */
  ofCompany(
    isin: string,
    query: CompanyPricesQuery = {},
    options: RequestOptions = {},
  ): Promise<WithMeta<CompanyPrices>> {
    return this.#http.get("/v1/companies/{isin}/prices", { path: { isin }, query, signal: options.signal });
  }
}

/**
 * News: the list (`list`, `pages`, `iter`, `all`, newest first, no body) and one article with its body (`article`).
 * With `q` the list is a full-text search (words, `"a phrase"`, `prefix*`; case and accents folded), the most
 * relevant first unless `sort: "published_at"` ({@link NewsQuery}); it combines with the other filters.
 *
 * @example
 * const { data } = await client.news.list({ q: '"net profit" reliance', limit: 5 });
 * const newest = await client.news.list({ q: "infra*", sort: "published_at", ticker: "LT" });
 */
export class NewsResource extends PagedList<"/v1/news"> {
  readonly #http: Http;

  constructor(http: Http) {
    super(http, "/v1/news");
    this.#http = http;
  }

  /** One article with its `body`; an unknown slug is a `NotFoundError`. */
  article(slug: string, options: RequestOptions = {}): Promise<WithMeta<Article>> {
    return this.#http.get("/v1/news/{slug}", { path: { slug }, signal: options.signal });
  }
}

/** The calling key's usage: free (not counted against the quota). */
export class UsageResource {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  /** Tier, limits, this month's requests and up to twelve months before. */
  get(options: RequestOptions = {}): Promise<WithMeta<Usage>> {
    return this.#http.get("/v1/usage", { signal: options.signal });
  }

  /** One month (`month: "YYYY-MM"`, default this one) day by day: requests, `304`s, requests by route. */
  daily(query: UsageDailyQuery = {}, options: RequestOptions = {}): Promise<WithMeta<UsageDaily>> {
    return this.#http.get("/v1/usage/daily", { query, signal: options.signal });
  }
}

/**
 * The account's webhook endpoints (contract 11.2): `create` (the answer
 * holds the `secret`, shown only then), `list`, `get`, `update`, `delete`,
 * `rotateSecret`, `test`, `attempts`, `replay`.
 */
export class WebhooksResource {
  readonly #http: Http;

  constructor(http: Http) {
    this.#http = http;
  }

  /** A new endpoint (`https` only); store its `secret` to verify deliveries. */
  create(body: WebhookCreate, options: RequestOptions = {}): Promise<WithMeta<WebhookEndpointWithSecret>> {
    return this.#http.write("POST", "/v1/webhooks", { body, signal: options.signal });
  }

  /** The account's endpoints. */
  async list(options: RequestOptions = {}): Promise<WithMeta<WebhookEndpoint[]>> {
    const page = await this.#http.get("/v1/webhooks", { signal: options.signal });
    return withMeta(page.data, page.meta);
  }

  /** One endpoint; an unknown id is a `NotFoundError`. */
  get(id: string, options: RequestOptions = {}): Promise<WithMeta<WebhookEndpoint>> {
    return this.#http.get("/v1/webhooks/{id}", { path: { id }, signal: options.signal });
  }

  /** Changes the fields given (`status: "disabled"` pauses deliveries). */
  update(id: string, body: WebhookUpdate, options: RequestOptions = {}): Promise<WithMeta<WebhookEndpoint>> {
    return this.#http.write("PATCH", "/v1/webhooks/{id}", { path: { id }, body, signal: options.signal });
  }

  /** Deletes the endpoint. */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#http.write("DELETE", "/v1/webhooks/{id}", { path: { id }, signal: options.signal });
  }

  /** A new secret; the old one keeps signing beside it for `expires_in` s (default 86,400). */
  rotateSecret(
    id: string,
    body: { expires_in?: number } = {},
    options: RequestOptions = {},
  ): Promise<WithMeta<WebhookEndpointWithSecret>> {
    return this.#http.write("POST", "/v1/webhooks/{id}/rotate-secret", { path: { id }, body, signal: options.signal });
  }

  /** Queues a `ping` to the endpoint; its event id. */
  test(id: string, options: RequestOptions = {}): Promise<WithMeta<{ event_id: string }>> {
    return this.#http.write("POST", "/v1/webhooks/{id}/test", { path: { id }, signal: options.signal });
  }

  /** The latest delivery attempts. */
  async attempts(id: string, options: RequestOptions = {}): Promise<WithMeta<WebhookAttempt[]>> {
    const page = await this.#http.get("/v1/webhooks/{id}/attempts", { path: { id }, signal: options.signal });
    return withMeta(page.data, page.meta);
  }

  /** Queues again what matched after event `since`. */
  replay(id: string, since: string, options: RequestOptions = {}): Promise<WithMeta<WebhookEndpoint>> {
    return this.#http.write("POST", "/v1/webhooks/{id}/replay", {
      path: { id },
      body: { since },
      signal: options.signal,
    });
  }
}
