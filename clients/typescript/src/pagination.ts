/**
 * Keyset pagination for every list route: one page, every page, every item
 * as an async iterator, or every item in an array. A list route is any `GET`
 * route whose `200` body has `data`, `has_more` and `next_cursor` and whose
 * query takes `cursor`; {@link PagedList} works for each with no code of its
 * own, so a new list route is one line in the client.
 *
 * @module
 */
import type { BodyOf, GetRoute, Http, QueryOf } from "./http.js";
import { type WithMeta, withMeta } from "./meta.js";

/** The page envelope every list shares. */
export interface PageEnvelope<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** The list routes: `GET` routes whose body is a page and whose query takes `cursor`. */
export type ListRoute = {
  [P in GetRoute]: BodyOf<P> extends PageEnvelope<unknown>
    ? QueryOf<P> extends { cursor?: string }
      ? P
      : never
    : never;
}[GetRoute];

/** The item type of list route `P`. */
export type ItemOf<P extends ListRoute> = BodyOf<P> extends PageEnvelope<infer T> ? T : never;

/** Options for a walk over many pages. */
export interface WalkOptions {
  /** Aborts the walk. */
  signal?: AbortSignal;
}

/** One list route's pages and items; see the module documentation. */
export class PagedList<P extends ListRoute> {
  readonly #http: Http;
  readonly #route: P;

  constructor(http: Http, route: P) {
    this.#http = http;
    this.#route = route;
  }

  /** One page: pass `next_cursor` back as `cursor` (with the same filters) for the next. */
  list(query: QueryOf<P> = {} as QueryOf<P>, options: WalkOptions = {}): Promise<WithMeta<BodyOf<P>>> {
    return this.#http.get(this.#route, { query, signal: options.signal } as never) as Promise<WithMeta<BodyOf<P>>>;
  }

  /** Every page from `query.cursor` (or the first) to the last, each with its meta. */
  async *pages(query: QueryOf<P> = {} as QueryOf<P>, options: WalkOptions = {}): AsyncGenerator<WithMeta<BodyOf<P>>> {
    let q = { ...query } as QueryOf<P> & { cursor?: string };
    for (;;) {
      const page = await this.list(q, options);
      yield page;
      const { has_more, next_cursor } = page as unknown as PageEnvelope<unknown>;
      if (!has_more || next_cursor === null) return;
      q = { ...q, cursor: next_cursor };
    }
  }

  /** Every item of every page, in order, fetched a page at a time as the loop asks. */
  async *iter(query: QueryOf<P> = {} as QueryOf<P>, options: WalkOptions = {}): AsyncGenerator<ItemOf<P>> {
    for await (const page of this.pages(query, options)) {
      yield* (page as unknown as PageEnvelope<ItemOf<P>>).data;
    }
  }

  /** Every item of every page in one array, with the last page's meta. */
  async all(query: QueryOf<P> = {} as QueryOf<P>, options: WalkOptions = {}): Promise<WithMeta<ItemOf<P>[]>> {
    const items: ItemOf<P>[] = [];
    let last: WithMeta<BodyOf<P>> | undefined;
    for await (const page of this.pages(query, options)) {
      items.push(...(page as unknown as PageEnvelope<ItemOf<P>>).data);
      last = page;
    }
    // pages() yields at least one page or throws.
    return withMeta(items, (last as WithMeta<BodyOf<P>>).meta);
  }
}
