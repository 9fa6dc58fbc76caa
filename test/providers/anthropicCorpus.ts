/**
 * The recorded Anthropic corpus (`test/fixtures/anthropic/`): every recording with its expectation, served as
 * the API sent it — a whole message as its recorded bytes, a stream as its recorded event lines, each framed as
 * the API frames them (`event: <type>`, `data: <line>`) — and what an expectation means in Rolecraft's words,
 * written here from the API's documentation (not from the layer): the usage convention and the stop reasons.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { ModelResponse } from "@rolecraft/core"
import { MessagesServer } from "@rolecraft/testing"

const root = fileURLToPath(new URL("../fixtures/anthropic/", import.meta.url))

/** One response of a recording (a stream may hold the responses of several requests, one after another). */
export interface Step {
  readonly model: string | null
  readonly text: string
  readonly reasoning: string
  readonly thinkingBlocks: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly input: unknown }>
  readonly otherBlocks: ReadonlyArray<string>
  readonly usage: {
    readonly input_tokens: number | null
    readonly cache_read_input_tokens: number | null
    readonly cache_creation_input_tokens: number | null
    readonly output_tokens: number | null
    readonly thinking_tokens: number | null
  }
  readonly stopReason: string | null
  readonly stopDetails: { readonly explanation?: string } | null
}

/** What a recording contains, as its expectation says (the fields the tests read). */
export interface Expectation {
  readonly recording: string
  readonly kind: "stream" | "json"
  readonly provenance: "recorded" | "handwritten-by-source"
  readonly steps: ReadonlyArray<Step>
}

/** One recording: its file name, bytes and expectation. */
export interface Recording {
  readonly name: string
  readonly body: string
  readonly expected: Expectation
}

/** Every recording, in name order. */
export const recordings: ReadonlyArray<Recording> = readdirSync(join(root, "expected"))
  .sort()
  .map((file) => {
    const expected = JSON.parse(readFileSync(join(root, "expected", file), "utf8")) as Expectation
    return {
      name: file.replace(/\.expected\.json$/, ""),
      expected,
      body: readFileSync(join(root, expected.recording), "utf8")
    }
  })

/** A recorded stream's lines, framed as the API frames its events. */
export const framed = (lines: ReadonlyArray<string>): string =>
  lines.map((line) => `event: ${(JSON.parse(line) as { readonly type: string }).type}\ndata: ${line}\n\n`).join("")

/** A recorded stream's responses: its lines from each `message_start` to the `message_stop` that ends it. */
export const responsesOf = (body: string): ReadonlyArray<ReadonlyArray<string>> => {
  const responses: Array<Array<string>> = []
  for (const line of body.split("\n")) {
    if (line.trim() === "") continue
    const type = (JSON.parse(line) as { readonly type: string }).type
    if (type === "message_start" || responses.length === 0) responses.push([])
    responses[responses.length - 1]?.push(line)
  }
  return responses
}

/** A recording served as it was recorded: one answer per response it holds. */
export const replay = (recording: Recording): ReadonlyArray<MessagesServer.Step> =>
  recording.expected.kind === "stream"
    ? responsesOf(recording.body).map((lines) =>
        MessagesServer.raw(framed(lines), { headers: { "content-type": "text/event-stream" } })
      )
    : [MessagesServer.raw(recording.body)]

/**
 * The usage a recording's wire counts mean in the one convention (as Anthropic documents them: `input_tokens`
 * counts only what is neither read from nor written to the cache, so input is the three added; thinking tokens
 * are part of `output_tokens`).
 */
export const usageOf = (expected: Step): ModelResponse.Response["usage"] => {
  const u = expected.usage
  const input = (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0)
  const output = u.output_tokens ?? 0
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input + output,
    ...(u.cache_read_input_tokens === null ? {} : { cachedInputTokens: u.cache_read_input_tokens }),
    ...(u.cache_creation_input_tokens === null ? {} : { cacheWriteInputTokens: u.cache_creation_input_tokens }),
    ...(u.thinking_tokens === null ? {} : { reasoningTokens: u.thinking_tokens })
  }
}

/** A stop reason in Rolecraft's words. */
export const finishOf: Readonly<Record<string, ModelResponse.FinishReason>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  refusal: "content_filter"
}
