/**
 * The metrics every agent records with Effect's `Metric`: calls and failures
 * of each action by category, call durations, and the tokens of each model
 * call. They live in Effect's metric registry (`Metric.MetricRegistry`), so
 * whatever exports Effect's metrics exports them — `Otlp.layerJson` from
 * `effect/observability`, `@effect/opentelemetry`'s `NodeSdk`, or
 * `PrometheusMetrics` — and a program reads them with `Metric.value`.
 *
 * | metric | type | attributes |
 * | --- | --- | --- |
 * | `rolecraft.action.calls` | counter | `rolecraft.agent`, `rolecraft.action` |
 * | `rolecraft.action.failures` | counter | `rolecraft.agent`, `rolecraft.action`, `rolecraft.category` |
 * | `rolecraft.action.duration` | histogram, milliseconds | `rolecraft.agent`, `rolecraft.action` |
 * | `gen_ai.client.token.usage` | histogram, tokens | `gen_ai.token.type` (`input`, `output`), `gen_ai.operation.name` (`chat`), `gen_ai.provider.name`, `gen_ai.request.model` |
 * | `rolecraft.client.token.usage.parts` | histogram, tokens | `rolecraft.token.part` (`cache_read`, `cache_write`, `reasoning`), and the attributes of `gen_ai.client.token.usage` |
 * | `gen_ai.client.operation.duration` | histogram, seconds | `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, and `error.type` (the category) on failure |
 *
 * A call is counted once however many attempts its retry policy makes;
 * interruption is a call and no failure. `rolecraft.category` is one of the
 * nine categories, or `RETRIEVAL` for a knowledge retrieval failure. The two
 * `gen_ai.client.*` histograms follow the OpenTelemetry GenAI conventions
 * (their bucket boundaries included) and record every model call: an llm
 * action's, and each step of a chat turn.
 *
 * @example
 * ```ts
 * import { Effect, Metric } from "effect"
 * import { Metrics } from "@rolecraft/core"
 *
 * const failedBookings = Metric.value(
 *   Metric.withAttributes(Metrics.actionFailures, {
 *     "rolecraft.agent": "planner",
 *     "rolecraft.action": "book",
 *     "rolecraft.category": "TRANSIENT"
 *   })
 * ) // Effect<{ count: number }>
 * ```
 *
 * @since 0.1.0
 */
import type * as Metric from "effect/Metric"
import * as Series from "./internal/events/series.ts"

/**
 * Every call an agent runs through its pipeline, by agent and action.
 *
 * @category metrics
 * @since 0.1.0
 */
export const actionCalls: Metric.Counter<number> = Series.actionCalls()

/**
 * Every failed call, by agent, action and category.
 *
 * @category metrics
 * @since 0.1.0
 */
export const actionFailures: Metric.Counter<number> = Series.actionFailures()

/**
 * How long each call took, in milliseconds, from the pipeline's first step to
 * its last (retries and fallback included), by agent and action.
 *
 * @category metrics
 * @since 0.1.0
 */
export const actionDuration: Metric.Histogram<number> = Series.actionDuration()

/**
 * Tokens of each model call, one observation for the input and one for the
 * output (`gen_ai.token.type`), as the GenAI conventions' client token usage.
 *
 * @category metrics
 * @since 0.1.0
 */
export const tokenUsage: Metric.Histogram<number> = Series.tokenUsage()

/**
 * The parts of each model call's tokens that its provider reports: input
 * read from the prompt cache (`cache_read`), input written to it
 * (`cache_write`) and output spent on reasoning (`reasoning`), by
 * `rolecraft.token.part`. Each is a part of the input or output observed in
 * {@link tokenUsage}, never on top of it: do not add them to it. A part the
 * provider does not report is not observed.
 *
 * @category metrics
 * @since 0.3.0
 */
export const tokenUsageParts: Metric.Histogram<number> = Series.tokenUsageParts()

/**
 * How long each model call took, in seconds, as the GenAI conventions' client
 * operation duration.
 *
 * @category metrics
 * @since 0.1.0
 */
export const operationDuration: Metric.Histogram<number> = Series.operationDuration()
