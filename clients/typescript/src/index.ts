/**
 * mds-client: a TypeScript client for the mds market-data API.
 *
 * - {@link Client}: companies, news, events and usage, typed from the
 *   service's OpenAPI document; pagination as async iterators; the event
 *   stream with resume; retries of `429` and `503`; rate-limit headers on
 *   every result (`meta`).
 * - Errors: one class per family ({@link ApiError} and its subclasses).
 * - {@link verifyWebhook}: checks a Standard Webhooks signature with WebCrypto.
 *
 * @packageDocumentation
 */
export {
  ActionsResource,
  Client,
  type ClientOptions,
  CompaniesResource,
  DEFAULT_BASE_URL,
  NewsResource,
  PricesResource,
  type RequestOptions,
  SymbolsResource,
  type SyncResult,
  type SyncStore,
  UsageResource,
  VERSION,
  WebhooksResource,
} from "./client.js";
export {
  ApiError,
  AuthenticationError,
  ConfigurationError,
  EventsExpiredError,
  ExpiredError,
  InvalidRequestError,
  MdsError,
  NotFoundError,
  RateLimitError,
  ServerError,
  SyncTokenExpiredError,
  TooManyStreamsError,
  TransportError,
  UnavailableError,
} from "./errors.js";
export { EventsResource, STREAM_SILENCE_MS, type StreamOptions } from "./events.js";
export type { components, operations, paths } from "./generated/openapi.js";
export type { BodyOf, GetOptions, GetRoute, PathParamsOf, QueryOf, StreamRoute } from "./http.js";
export type { ResponseMeta, WithMeta } from "./meta.js";
export { type ItemOf, type ListRoute, PagedList, type PageEnvelope, type WalkOptions } from "./pagination.js";
export { type RetryOptions, RetryPolicy } from "./retry.js";
export { SseParser } from "./sse.js";
export type * from "./types.js";
export {
  type HeadersLike,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from "./webhooks.js";
