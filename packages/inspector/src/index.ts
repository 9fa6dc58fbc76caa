/**
 * @rolecraft/inspector — a local page that shows every chat turn an app
 * exported over OTLP (spans, tokens, nested agents) and decides the calls
 * waiting in an approval store.
 *
 * @since 0.3.0
 */
export * as Inspector from "./Inspector.ts"
export * as Runs from "./Runs.ts"
export * as Traces from "./Traces.ts"
