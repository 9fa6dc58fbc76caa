/**
 * Spans and metrics of the OpenTelemetry GenAI conventions, as trailing
 * pipeables: `invoke_agent {agent}` around a chat turn, `chat {model}` around
 * a model call, `execute_tool {tool}` around a call through the pipeline (or
 * a tool call answered before it), and the metrics of `Metrics`. Rolecraft's
 * own attributes are under `rolecraft.*`; arguments and results are span
 * attributes only when the agent opts in (`traceContent`).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Metric from "effect/Metric"
import * as Tracer from "effect/Tracer"
import { isActionError } from "../../ActionError.ts"
import * as Series from "./series.ts"
import * as Pending from "../pending.ts"
import { shorten } from "../text.ts"

/** The longest argument or result text put on a span (opt-in), in characters. */
export const maxContentLength = 8192

const categoryOf = (cause: Cause.Cause<unknown>): string | undefined => {
  if (Cause.hasInterruptsOnly(cause)) return undefined
  const error = Cause.squash(cause)
  if (isActionError(error)) return error.category
  return typeof error === "object" && error !== null && "_tag" in error && error._tag === "RetrievalFailure"
    ? "RETRIEVAL"
    : "DEFECT"
}

const text = (value: unknown): string => {
  if (typeof value === "string") return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

// Redacted before it is cut, so no cut leaves the start of a secret behind.
const content = (value: unknown, redact: (text: string) => string): string =>
  shorten(redact(text(value)), maxContentLength)

/**
 * Whether the spans of the current fiber go to a tracing backend. With
 * Effect's native tracer (none installed) nothing can read a span's
 * attributes, so they are not recorded: the span itself (its name, parent and
 * timing) still is, as Effect's documentation of `nativeTracer` suggests.
 */
const exporting = (fiber: Fiber.Fiber<unknown, unknown>): boolean => fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer

/**
 * `self` with `span` as its parent span. Only the parent span: not also a
 * stack frame named after the span, as `Effect.withParentSpan` adds for the
 * traces of defects. These spans wrap every call and every model call, the
 * call site is always Rolecraft's own, and each context change costs a
 * rebuild of the fiber's context cache on the way in and out (about 10% of a
 * local action's whole call).
 */
const asParent = <A, E, R>(self: Effect.Effect<A, E, R>, span: Tracer.Span): Effect.Effect<A, E, R> =>
  Effect.provideService(self, Tracer.ParentSpan, span)

const unannotated = {
  internal: { kind: "internal" },
  client: { kind: "client" }
} as const satisfies Record<string, Tracer.SpanOptionsNoTrace>

/**
 * Runs `self` in its span `name`, as the parent of what it runs. The span's
 * attributes (`options`, made only then) are recorded only when a tracer is
 * installed. At the exit `ended` gets the span (`undefined` when nothing
 * records attributes), the milliseconds since the start, and the caller's
 * context for the metrics. One fiber read and two clock reads: this wraps
 * every call, model call and turn.
 */
const spanned = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  name: string,
  kind: keyof typeof unannotated,
  options: () => Tracer.SpanOptionsNoTrace,
  ended: (span: Tracer.Span | undefined, exit: Exit.Exit<A, E>, millis: number, context: Context.Context<never>) => void
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeMillisUnsafe()
    const annotated = exporting(fiber)
    return Effect.useSpan(name, annotated ? options() : unannotated[kind], (span) =>
      Effect.onExit(asParent(self, span), (exit) => {
        ended(annotated ? span : undefined, exit, clock.currentTimeMillisUnsafe() - start, fiber.context)
        return Effect.void
      })
    )
  })

/** A failure's category, also put on `span` as `error.type` and `rolecraft.category` (none for an interruption). */
const failedWith = (span: Tracer.Span | undefined, cause: Cause.Cause<unknown>): string | undefined => {
  const category = categoryOf(cause)
  if (category !== undefined) {
    span?.attribute("error.type", category)
    span?.attribute("rolecraft.category", category)
  }
  return category
}

// =============================================================================
// execute_tool
// =============================================================================

/**
 * The metric series of one action of one agent, made once and reused by every
 * call. `recordUnsafe` updates them synchronously in the registry of `context`
 * (one context read per call instead of one per metric).
 */
export interface ActionMetrics {
  readonly recordUnsafe: (
    exit: Exit.Exit<unknown, unknown>,
    durationMs: number,
    context: Context.Context<never>
  ) => void
}

/** The metric series of an agent's actions, by action name (made on first use). */
export const actionMetrics = (agentId: string): ((action: string) => ActionMetrics) => {
  const byAction = new Map<string, ActionMetrics>()
  return (action) => {
    const known = byAction.get(action)
    if (known !== undefined) return known
    const attributes = { "rolecraft.agent": agentId, "rolecraft.action": action }
    const calls = Series.actionCalls(attributes)
    const duration = Series.actionDuration(attributes)
    const failures = new Map<string, Metric.Counter<number>>()
    const failure = (category: string) => {
      let metric = failures.get(category)
      if (metric === undefined) {
        metric = Series.actionFailures({ ...attributes, "rolecraft.category": category })
        failures.set(category, metric)
      }
      return metric
    }
    const made: ActionMetrics = {
      recordUnsafe: (exit, durationMs, context) => {
        calls.updateUnsafe(1, context)
        duration.updateUnsafe(durationMs, context)
        if (Exit.isSuccess(exit)) return
        const category = categoryOf(exit.cause)
        if (category !== undefined) failure(category).updateUnsafe(1, context)
      }
    }
    byAction.set(action, made)
    return made
  }
}

/**
 * The tool call a pipeline call answers in a chat turn: the model's call
 * `id` and the `tool` name it used (its `execute_tool` span is named after
 * it and carries both).
 */
export interface ToolCallSpan {
  readonly id: string
  readonly tool: string
}

/**
 * What an `execute_tool` span says of one call: the tool name the model used
 * (the action name for a direct call), its call id in a chat turn, the
 * `rolecraft.*` attributes, and the raw arguments when content is traced.
 * `redact`, when given, replaces the agent's secrets in every text the span
 * records (its name, the call id and attributes, the arguments and result);
 * it is read only when a tracer records the span's attributes.
 */
export interface ToolCall {
  readonly tool: string
  readonly toolCallId: string | undefined
  readonly attributes: Readonly<Record<string, string>>
  readonly arguments: (() => unknown) | undefined
  readonly redact?: Effect.Effect<(text: string) => string> | undefined
}

const asIs = (text: string): string => text

/**
 * Runs one call in its `execute_tool {tool}` span (kind internal) and records
 * its metrics: on failure the span gets `error.type` and
 * `rolecraft.category`; with content traced, `gen_ai.tool.call.arguments` and
 * (on success) `gen_ai.tool.call.result`. Attributes are recorded only when
 * a tracer is installed; its options are made once, when one first records
 * them: an agent prepares this per action. Without `metrics` (a call answered
 * before the pipeline), only the span. The texts it records pass `redact`
 * (before a long one is cut).
 */
export const executeTool = (call: ToolCall, metrics?: ActionMetrics) => {
  const traceContent = call.arguments !== undefined
  const recorded = (redact: (text: string) => string) => {
    // Made when a tracer first records them: a call in a chat turn has its own call id, so its own attributes.
    let options: Tracer.SpanOptionsNoTrace | undefined
    const annotatedOptions = (): Tracer.SpanOptionsNoTrace =>
      (options ??= {
        kind: "internal",
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": redact(call.tool),
          ...(call.toolCallId === undefined ? {} : { "gen_ai.tool.call.id": redact(call.toolCallId) }),
          ...(redact === asIs
            ? call.attributes
            : Object.fromEntries(Object.entries(call.attributes).map(([key, value]) => [key, redact(value)]))),
          ...(call.arguments === undefined ? {} : { "gen_ai.tool.call.arguments": content(call.arguments(), redact) })
        }
      })
    const ended = (
      span: Tracer.Span | undefined,
      exit: Exit.Exit<unknown, unknown>,
      millis: number,
      context: Context.Context<never>
    ) => {
      // A call that waits for an approval did not run: it is recorded as its APPROVAL failure.
      const seen = Pending.observed(exit)
      metrics?.recordUnsafe(seen, millis, context)
      if (Exit.isFailure(seen)) failedWith(span, seen.cause)
      else if (traceContent) span?.attribute("gen_ai.tool.call.result", content(seen.value, redact))
    }
    return { name: `execute_tool ${redact(call.tool)}`, annotatedOptions, ended }
  }
  const plain = recorded(asIs)
  const redact = call.redact
  if (redact === undefined) {
    return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      spanned(self, plain.name, "internal", plain.annotatedOptions, plain.ended)
  }
  // The agent's secrets are read only when a tracer records what the span says.
  return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) =>
      exporting(fiber)
        ? Effect.flatMap(redact, (replace) => {
            const made = recorded(replace)
            return spanned(self, made.name, "internal", made.annotatedOptions, made.ended)
          })
        : spanned(self, plain.name, "internal", plain.annotatedOptions, plain.ended)
    )
}

// =============================================================================
// chat (one model call)
// =============================================================================

/** What a `chat` span says of one model call before it is made. */
export interface ModelCall {
  readonly provider: string
  readonly model: string | undefined
  readonly action: string
  readonly temperature: number | undefined
}

/** The answer's attributes, put on the span when the call succeeds. */
export interface ModelAnswer {
  readonly model: string | undefined
  readonly finishReason: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cachedInputTokens?: number | undefined
  readonly cacheWriteInputTokens?: number | undefined
  readonly reasoningTokens?: number | undefined
}

/**
 * The span attributes of the parts of a usage (each a part of input or output, never on top of them), as the
 * GenAI conventions name them: cache reads, cache writes, reasoning. Absent parts are not written.
 */
export const usagePartAttributes = [
  ["cachedInputTokens", "gen_ai.usage.cache_read.input_tokens"],
  ["cacheWriteInputTokens", "gen_ai.usage.cache_creation.input_tokens"],
  ["reasoningTokens", "gen_ai.usage.reasoning.output_tokens"]
] as const

/** The parts of a usage as span attributes (see {@link usagePartAttributes}). */
export const usagePartsOf = (usage: {
  readonly cachedInputTokens?: number | undefined
  readonly cacheWriteInputTokens?: number | undefined
  readonly reasoningTokens?: number | undefined
}): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [part, key] of usagePartAttributes) {
    const value = usage[part]
    if (value !== undefined) out[key] = value
  }
  return out
}

/** Writes the parts of a usage (see {@link usagePartAttributes}) on `span`. */
const partsOnSpan = (
  span: { readonly attribute: (key: string, value: unknown) => void },
  usage: {
    readonly cachedInputTokens?: number | undefined
    readonly cacheWriteInputTokens?: number | undefined
    readonly reasoningTokens?: number | undefined
  }
): void => {
  for (const [part, key] of usagePartAttributes) {
    const value = usage[part]
    if (value !== undefined) span.attribute(key, value)
  }
}

/** The metric series of model calls to one provider and model, made once and reused by every call. */
interface ModelMetrics {
  readonly duration: Metric.Histogram<number>
  readonly inputTokens: Metric.Histogram<number>
  readonly outputTokens: Metric.Histogram<number>
  readonly parts: { readonly [K in (typeof usagePartAttributes)[number][0]]: Metric.Histogram<number> }
  readonly failed: (category: string) => Metric.Histogram<number>
}

const modelMetrics = (common: Readonly<Record<string, string>>): ModelMetrics => {
  const failures = new Map<string, Metric.Histogram<number>>()
  return {
    duration: Series.operationDuration(common),
    inputTokens: Series.tokenUsage({ ...common, "gen_ai.token.type": "input" }),
    outputTokens: Series.tokenUsage({ ...common, "gen_ai.token.type": "output" }),
    parts: {
      cachedInputTokens: Series.tokenUsageParts({ ...common, "rolecraft.token.part": "cache_read" }),
      cacheWriteInputTokens: Series.tokenUsageParts({ ...common, "rolecraft.token.part": "cache_write" }),
      reasoningTokens: Series.tokenUsageParts({ ...common, "rolecraft.token.part": "reasoning" })
    },
    failed: (category) => {
      let metric = failures.get(category)
      if (metric === undefined) {
        metric = Series.operationDuration({ ...common, "error.type": category })
        failures.set(category, metric)
      }
      return metric
    }
  }
}

/** What the span and metrics of one kind of model call need, made once per provider, model, action and temperature. */
interface PreparedChat {
  readonly name: string
  readonly options: Tracer.SpanOptionsNoTrace
  readonly metrics: ModelMetrics
}

// Model calls named per call are few in practice; past this many kinds, each call prepares its own.
const maxPrepared = 256
const prepared = new Map<string, PreparedChat>()

const prepare = (call: ModelCall): PreparedChat => {
  const key = `${call.provider}\u0000${call.model ?? ""}\u0000${call.action}\u0000${call.temperature ?? ""}`
  const known = prepared.get(key)
  if (known !== undefined) return known
  const common: Record<string, string> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": call.provider,
    ...(call.model === undefined ? {} : { "gen_ai.request.model": call.model })
  }
  const made: PreparedChat = {
    name: call.model === undefined ? "chat" : `chat ${call.model}`,
    // The call site is always `generate`: a stack trace would say nothing and costs a capture per call.
    options: {
      kind: "client",
      attributes: {
        ...common,
        ...(call.temperature === undefined ? {} : { "gen_ai.request.temperature": call.temperature }),
        "rolecraft.action": call.action
      }
    },
    metrics: modelMetrics(common)
  }
  if (prepared.size < maxPrepared) prepared.set(key, made)
  return made
}

/**
 * Runs one model call in its `chat {model}` span (kind client; `chat` when no
 * model is known) and records `gen_ai.client.token.usage` and
 * `gen_ai.client.operation.duration`. `answer` reads what the span and the
 * token metric say of a success.
 */
export const chat =
  <A>(call: ModelCall, answer: (value: A) => ModelAnswer) =>
  <E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const { name, options, metrics } = prepare(call)
    return spanned(
      self,
      name,
      "client",
      () => options,
      (span, exit, millis, context) => {
        const seconds = millis / 1000
        if (Exit.isFailure(exit)) {
          const category = failedWith(span, exit.cause)
          if (category !== undefined) metrics.failed(category).updateUnsafe(seconds, context)
          return
        }
        const answered = answer(exit.value)
        if (span !== undefined) {
          if (answered.model !== undefined) span.attribute("gen_ai.response.model", answered.model)
          span.attribute("gen_ai.response.finish_reasons", [answered.finishReason])
          span.attribute("gen_ai.usage.input_tokens", answered.inputTokens)
          span.attribute("gen_ai.usage.output_tokens", answered.outputTokens)
          partsOnSpan(span, answered)
        }
        metrics.duration.updateUnsafe(seconds, context)
        metrics.inputTokens.updateUnsafe(answered.inputTokens, context)
        metrics.outputTokens.updateUnsafe(answered.outputTokens, context)
        for (const [part] of usagePartAttributes) {
          const value = answered[part]
          if (value !== undefined) metrics.parts[part].updateUnsafe(value, context)
        }
      }
    )
  }

// =============================================================================
// invoke_agent (one chat turn)
// =============================================================================

/** What an `invoke_agent` span says of a turn's end. */
export interface TurnEnd {
  readonly result: string
  readonly steps: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cachedInputTokens?: number | undefined
  readonly cacheWriteInputTokens?: number | undefined
  readonly reasoningTokens?: number | undefined
  readonly finishReason: string | undefined
}

/**
 * Runs a chat turn (or its resumption) in its `invoke_agent {agent}` span
 * (kind internal): the agent's id as `gen_ai.agent.name` and `gen_ai.agent.id`,
 * the turn's model when known, and at its end the turn's tokens, steps and
 * result; `error.type` when the turn fails.
 */
export const invokeAgent = <A>(
  turn: { readonly agentId: string; readonly model: string | undefined; readonly resumed: boolean },
  end: (value: A) => TurnEnd
) => {
  const options: Tracer.SpanOptionsNoTrace = {
    kind: "internal",
    attributes: {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": turn.agentId,
      "gen_ai.agent.id": turn.agentId,
      ...(turn.model === undefined ? {} : { "gen_ai.request.model": turn.model }),
      "rolecraft.agent": turn.agentId,
      ...(turn.resumed ? { "rolecraft.chat.resumed": true } : {})
    }
  }
  return <E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    spanned(
      self,
      `invoke_agent ${turn.agentId}`,
      "internal",
      () => options,
      (span, exit) => {
        if (span === undefined) return
        if (Exit.isFailure(exit)) {
          failedWith(span, exit.cause)
          return
        }
        const turnEnd = end(exit.value)
        span.attribute("gen_ai.usage.input_tokens", turnEnd.inputTokens)
        span.attribute("gen_ai.usage.output_tokens", turnEnd.outputTokens)
        partsOnSpan(span, turnEnd)
        if (turnEnd.finishReason !== undefined) span.attribute("gen_ai.response.finish_reasons", [turnEnd.finishReason])
        span.attribute("rolecraft.chat.result", turnEnd.result)
        span.attribute("rolecraft.chat.steps", turnEnd.steps)
      }
    )
}
