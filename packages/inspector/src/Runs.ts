/**
 * What the inspector shows of received spans: the runs — every chat turn,
 * read from its `invoke_agent` span (the OpenTelemetry GenAI conventions'
 * span of an agent's turn, as Rolecraft's agents emit it) — and a turn's
 * span tree for its timeline.
 *
 * A turn is an `invoke_agent` span with no `invoke_agent` above it in its
 * trace: the turns of nested agents (an agent used as an action, a handoff)
 * are part of the turn that called them, and show in its tree with their
 * agent path. Spans arrive as each ends, in batches: a summary is made from
 * whatever has arrived, so a tree can grow while its turn's spans come in.
 *
 * @example
 * ```ts
 * import { Inspector, Runs } from "@rolecraft/inspector"
 * import { Console, Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const inspector = yield* Inspector.start()
 *   // … an app exports its spans to inspector.url …
 *   const spans = yield* inspector.traces.spans
 *   for (const turn of Runs.turns(spans)) {
 *     yield* Console.log(`${turn.agent}: ${turn.status}, ${turn.tokens.input} tokens in`)
 *     for (const node of Runs.tree(spans, turn.traceId, turn.spanId)) {
 *       yield* Console.log(`${"  ".repeat(node.depth)}${node.name} (${node.path.join(" > ")})`)
 *     }
 *   }
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.3.0
 */
import type { Span } from "./Traces.ts"

/**
 * Tokens of a turn or a model call: input and output, and the cached
 * (read from a provider's cache) and reasoning parts when reported.
 *
 * @category models
 * @since 0.3.0
 */
export interface Tokens {
  readonly input: number
  readonly output: number
  readonly cached: number | undefined
  readonly reasoning: number | undefined
}

/**
 * One chat turn:
 *
 * - `traceId`, `spanId`: its `invoke_agent` span;
 * - `agent`: the agent's id; `turnId` its turn's id (`rolecraft.turn.id`)
 *   when the agent recorded it; `resumed` when it continues a paused turn;
 * - `status`: how it ended — `Completed`, `AwaitingApproval`,
 *   `StepLimitReached` (Rolecraft's `rolecraft.chat.result`), `Failed` (an
 *   error status), or `Ok` for another agent's span that says none;
 * - `category`: the error category when it failed (`rolecraft.category`,
 *   else `error.type`);
 * - `startedAt` (epoch milliseconds) and `durationMs`;
 * - `modelCalls`, `toolCalls`: its `chat` and `execute_tool` spans,
 *   nested agents' included;
 * - `tokens`: the turn's own total when its span has one, else the sum of
 *   its model calls';
 * - `service`: the sending resource's `service.name`.
 *
 * @category models
 * @since 0.3.0
 */
export interface Turn {
  readonly traceId: string
  readonly spanId: string
  readonly agent: string
  readonly turnId: string | undefined
  readonly resumed: boolean
  readonly status: string
  readonly category: string | undefined
  readonly startedAt: number
  readonly durationMs: number
  readonly modelCalls: number
  readonly toolCalls: number
  readonly tokens: Tokens
  readonly service: string | undefined
}

/**
 * One span of a turn's tree, depth first in start order: `depth` from 0
 * (the turn), `offsetMs` from the turn's start, `durationMs`, `operation`
 * (`gen_ai.operation.name`: `invoke_agent`, `chat`, `execute_tool`, …),
 * `path` the agents it runs under (outermost first: `["lead",
 * "researcher"]` inside a nested agent), and its attributes as received.
 *
 * @category models
 * @since 0.3.0
 */
export interface Node {
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly operation: string | undefined
  readonly depth: number
  readonly offsetMs: number
  readonly durationMs: number
  readonly path: ReadonlyArray<string>
  readonly status: number
  readonly statusMessage: string | undefined
  readonly attributes: Readonly<Record<string, unknown>>
}

const operationOf = (span: Span): string | undefined => {
  const operation = span.attributes["gen_ai.operation.name"]
  return typeof operation === "string" ? operation : undefined
}

const isAgentTurn = (span: Span) => operationOf(span) === "invoke_agent" || span.name.startsWith("invoke_agent ")

const millis = (nanos: bigint): number => Number(nanos / 1_000_000n)

const durationOf = (span: Span): number =>
  span.endTimeUnixNano >= span.startTimeUnixNano ? Number(span.endTimeUnixNano - span.startTimeUnixNano) / 1e6 : 0

const numberAt = (span: Span, key: string): number | undefined => {
  const value = span.attributes[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

const stringAt = (span: Span, key: string): string | undefined => {
  const value = span.attributes[key]
  return typeof value === "string" ? value : undefined
}

const tokensOf = (span: Span): Tokens | undefined => {
  const input = numberAt(span, "gen_ai.usage.input_tokens")
  const output = numberAt(span, "gen_ai.usage.output_tokens")
  if (input === undefined && output === undefined) return undefined
  return {
    input: input ?? 0,
    output: output ?? 0,
    cached: numberAt(span, "gen_ai.usage.cache_read.input_tokens"),
    reasoning: numberAt(span, "gen_ai.usage.reasoning.output_tokens")
  }
}

const plus = (a: number | undefined, b: number | undefined) =>
  a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0)

const sum = (all: ReadonlyArray<Tokens>): Tokens =>
  all.reduce<Tokens>(
    (total, tokens) => ({
      input: total.input + tokens.input,
      output: total.output + tokens.output,
      cached: plus(total.cached, tokens.cached),
      reasoning: plus(total.reasoning, tokens.reasoning)
    }),
    { input: 0, output: 0, cached: undefined, reasoning: undefined }
  )

/** The spans of each trace, by span id, and each span's children in start order. */
const index = (spans: ReadonlyArray<Span>) => {
  const byId = new Map<string, Span>()
  for (const span of spans) byId.set(`${span.traceId}/${span.spanId}`, span)
  const children = new Map<string, Array<Span>>()
  for (const span of byId.values()) {
    if (span.parentSpanId === undefined) continue
    const key = `${span.traceId}/${span.parentSpanId}`
    const siblings = children.get(key)
    if (siblings === undefined) children.set(key, [span])
    else siblings.push(span)
  }
  for (const siblings of children.values()) {
    siblings.sort((a, b) =>
      a.startTimeUnixNano < b.startTimeUnixNano ? -1 : a.startTimeUnixNano > b.startTimeUnixNano ? 1 : 0
    )
  }
  const parentOf = (span: Span) =>
    span.parentSpanId === undefined ? undefined : byId.get(`${span.traceId}/${span.parentSpanId}`)
  const childrenOf = (span: Span): ReadonlyArray<Span> => children.get(`${span.traceId}/${span.spanId}`) ?? []
  return { byId, parentOf, childrenOf }
}

type Index = ReturnType<typeof index>

const descendants = (at: Index, root: Span): ReadonlyArray<Span> => {
  const out: Array<Span> = []
  const walk = (span: Span) => {
    for (const child of at.childrenOf(span)) {
      out.push(child)
      walk(child)
    }
  }
  walk(root)
  return out
}

/** The turn a span belongs to: its outermost `invoke_agent` ancestor (itself included). */
const turnRootOf = (at: Index, span: Span): Span | undefined => {
  let root: Span | undefined
  for (let current: Span | undefined = span; current !== undefined; current = at.parentOf(current)) {
    if (isAgentTurn(current)) root = current
  }
  return root
}

const summary = (at: Index, root: Span): Turn => {
  const below = descendants(at, root)
  const calls = below.filter((span) => operationOf(span) === "chat")
  const own = tokensOf(root)
  const failed = root.statusCode === 2
  return {
    traceId: root.traceId,
    spanId: root.spanId,
    agent: stringAt(root, "gen_ai.agent.name") ?? stringAt(root, "rolecraft.agent") ?? root.name,
    turnId: stringAt(root, "rolecraft.turn.id"),
    resumed: root.attributes["rolecraft.chat.resumed"] === true,
    status: failed ? "Failed" : (stringAt(root, "rolecraft.chat.result") ?? "Ok"),
    category: failed ? (stringAt(root, "rolecraft.category") ?? stringAt(root, "error.type")) : undefined,
    startedAt: millis(root.startTimeUnixNano),
    durationMs: durationOf(root),
    modelCalls: calls.length,
    toolCalls: below.filter((span) => operationOf(span) === "execute_tool").length,
    tokens: own ?? sum(calls.flatMap((span) => tokensOf(span) ?? [])),
    service: root.service
  }
}

/**
 * Every turn among `spans`, the latest first.
 *
 * @category getters
 * @since 0.3.0
 */
export const turns = (spans: ReadonlyArray<Span>): ReadonlyArray<Turn> => {
  const at = index(spans)
  return [...at.byId.values()]
    .filter((span) => isAgentTurn(span) && turnRootOf(at, span) === span)
    .map((root) => summary(at, root))
    .sort((a, b) => b.startedAt - a.startedAt || (a.spanId < b.spanId ? -1 : 1))
}

const pathOf = (span: Span, inherited: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (!isAgentTurn(span)) return inherited
  const recorded = span.attributes["rolecraft.agent.path"]
  if (Array.isArray(recorded) && recorded.every((entry) => typeof entry === "string")) return recorded
  const agent = stringAt(span, "gen_ai.agent.name")
  return agent === undefined ? inherited : [...inherited, agent]
}

/**
 * The tree of the turn whose `invoke_agent` span is `spanId` in trace
 * `traceId`, depth first in start order (empty when it has not arrived).
 *
 * @category getters
 * @since 0.3.0
 */
export const tree = (spans: ReadonlyArray<Span>, traceId: string, spanId: string): ReadonlyArray<Node> => {
  const at = index(spans)
  const root = at.byId.get(`${traceId}/${spanId}`)
  if (root === undefined) return []
  const nodes: Array<Node> = []
  const walk = (span: Span, depth: number, inherited: ReadonlyArray<string>) => {
    const path = pathOf(span, inherited)
    nodes.push({
      spanId: span.spanId,
      parentSpanId: span.parentSpanId,
      name: span.name,
      operation: operationOf(span),
      depth,
      offsetMs: Number(span.startTimeUnixNano - root.startTimeUnixNano) / 1e6,
      durationMs: durationOf(span),
      path,
      status: span.statusCode,
      statusMessage: span.statusMessage,
      attributes: span.attributes
    })
    for (const child of at.childrenOf(span)) walk(child, depth + 1, path)
  }
  walk(root, 0, [])
  return nodes
}

/**
 * A tool's call and result as a traced turn shows them (with content
 * tracing on: `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`).
 *
 * @category models
 * @since 0.3.0
 */
export interface ToolResult {
  readonly tool: string
  readonly callId: string | undefined
  readonly path: ReadonlyArray<string>
  readonly arguments: string | undefined
  readonly result: string
  readonly endedAt: number
}

/**
 * The tool results of the turn (outermost) that holds the turn `turnId`,
 * which ended at or before `before` (epoch milliseconds), oldest first:
 * what the model had seen when it asked for a call the turn paused on.
 * Empty when the turn was not traced, or traced without content.
 *
 * @category getters
 * @since 0.3.0
 */
export const toolResultsBefore = (
  spans: ReadonlyArray<Span>,
  turnId: string,
  before: number
): ReadonlyArray<ToolResult> => {
  const at = index(spans)
  const roots = new Set<Span>()
  for (const span of at.byId.values()) {
    if (isAgentTurn(span) && stringAt(span, "rolecraft.turn.id") === turnId) {
      const root = turnRootOf(at, span)
      if (root !== undefined) roots.add(root)
    }
  }
  const results: Array<ToolResult> = []
  for (const root of roots) {
    const nodes = tree(spans, root.traceId, root.spanId)
    for (const node of nodes) {
      const result = node.attributes["gen_ai.tool.call.result"]
      const span = at.byId.get(`${root.traceId}/${node.spanId}`)
      if (node.operation !== "execute_tool" || typeof result !== "string" || span === undefined) continue
      const endedAt = millis(span.endTimeUnixNano)
      if (endedAt > before) continue
      const callId = node.attributes["gen_ai.tool.call.id"]
      const args = node.attributes["gen_ai.tool.call.arguments"]
      results.push({
        tool: stringAt(span, "gen_ai.tool.name") ?? node.name,
        callId: typeof callId === "string" ? callId : undefined,
        path: node.path,
        arguments: typeof args === "string" ? args : undefined,
        result,
        endedAt
      })
    }
  }
  return results.sort((a, b) => a.endedAt - b.endedAt)
}
