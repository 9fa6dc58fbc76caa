/**
 * Writes what each recorded Responses API answer contains, straight from its
 * JSON (it imports nothing from Rolecraft): `test/fixtures/providers/expected/
 * openai-responses/<file>.expected.json` for every file under
 * `recordings/openai-responses/`. Run once when a recording is added, and
 * the result checked by eye; `test/providers/responses-corpus.test.ts`
 * compares Rolecraft's reading with it.
 *
 * - `text`: every `output_text` part's text (a stream: every
 *   `response.output_text.delta`), joined; `refusal` likewise.
 * - `toolCalls`: the `function_call` items (a stream: from
 *   `response.output_item.done`), in order: `call_id`, name, arguments.
 * - `reasoning`: each reasoning item's summary texts, joined by a blank line;
 *   `reasoningItems`: how many reasoning items, and how many carry
 *   encrypted content.
 * - `usage`: the response's input, output, total, cached and reasoning tokens.
 * - `status` and `incompleteReason`: the final response's.
 * - `error`: an error body's or event's message and code/type.
 * - `otherItems`: the output item types that are neither messages, function
 *   calls nor reasoning (the API's own tools), for reading.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "../test/fixtures/providers")
const recordings = join(root, "recordings/openai-responses")
const expected = join(root, "expected/openai-responses")

type Json = any

const usageOf = (usage: Json) =>
  usage == null
    ? null
    : {
        inputTokens: usage.input_tokens ?? null,
        outputTokens: usage.output_tokens ?? null,
        totalTokens: usage.total_tokens ?? null,
        cachedInputTokens: usage.input_tokens_details?.cached_tokens ?? null,
        reasoningTokens: usage.output_tokens_details?.reasoning_tokens ?? null
      }

const summaryOf = (item: Json): string =>
  (item.summary ?? [])
    .map((part: Json) => part.text ?? "")
    .filter((text: string) => text !== "")
    .join("\n\n")

const fromItems = (items: ReadonlyArray<Json>) => {
  let text = ""
  let refusal = ""
  const toolCalls: Array<Json> = []
  const reasoning: Array<string> = []
  let reasoningItems = 0
  let encrypted = 0
  const otherItems: Array<string> = []
  for (const item of items) {
    if (item.type === "message") {
      for (const part of item.content ?? []) {
        if (part.type === "output_text") text += part.text
        if (part.type === "refusal") refusal += part.refusal
      }
    } else if (item.type === "function_call") {
      toolCalls.push({ id: item.call_id, name: item.name, arguments: item.arguments })
    } else if (item.type === "reasoning") {
      reasoningItems++
      if (typeof item.encrypted_content === "string") encrypted++
      const summary = summaryOf(item)
      if (summary !== "") reasoning.push(summary)
    } else otherItems.push(item.type)
  }
  return {
    text,
    refusal: refusal === "" ? null : refusal,
    toolCalls,
    reasoning: reasoning.length === 0 ? null : reasoning.join("\n\n"),
    reasoningItems: { count: reasoningItems, encrypted },
    otherItems
  }
}

mkdirSync(expected, { recursive: true })
for (const file of readdirSync(recordings).sort()) {
  const raw = readFileSync(join(recordings, file), "utf8")
  let out: Json
  if (file.endsWith(".chunks.txt")) {
    const events = raw
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line))
    const done = events.filter((e: Json) => e.type === "response.output_item.done").map((e: Json) => e.item)
    const items = fromItems(done)
    const last = events.findLast((e: Json) =>
      ["response.completed", "response.incomplete", "response.failed"].includes(e.type)
    )?.response
    const errorEvent = events.find((e: Json) => e.type === "error")
    const error =
      errorEvent !== undefined
        ? {
            message: errorEvent.error?.message ?? errorEvent.message,
            code: errorEvent.error?.code ?? errorEvent.code ?? null
          }
        : last?.status === "failed"
          ? { message: last.error?.message ?? null, code: last.error?.code ?? null }
          : null
    out = {
      recording: file,
      kind: "stream",
      ...items,
      text: events
        .filter((e: Json) => e.type === "response.output_text.delta")
        .map((e: Json) => e.delta)
        .join(""),
      usage: usageOf(last?.usage),
      status: last?.status ?? null,
      incompleteReason: last?.incomplete_details?.reason ?? null,
      error
    }
  } else {
    const body = JSON.parse(raw)
    if (body.error != null && body.output === undefined) {
      out = {
        recording: file,
        kind: "error",
        error: { message: body.error.message, code: body.error.code ?? body.error.type ?? null }
      }
    } else {
      out = {
        recording: file,
        kind: "json",
        ...fromItems(body.output ?? []),
        usage: usageOf(body.usage),
        status: body.status ?? null,
        incompleteReason: body.incomplete_details?.reason ?? null,
        error:
          body.status === "failed" ? { message: body.error?.message ?? null, code: body.error?.code ?? null } : null
      }
    }
  }
  writeFileSync(join(expected, `${file}.expected.json`), `${JSON.stringify(out, null, 2)}\n`)
}
