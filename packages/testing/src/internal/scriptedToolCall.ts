/**
 * A tool call in a script, as both scripted models take it: `ScriptedModel`
 * (answering at the `LanguageModel` boundary) and `ChatCompletionsServer`
 * (answering on the wire), each re-exporting the type.
 */

/**
 * A tool call a scripted answer makes. `id` defaults to `call_<n>`, `n`
 * counting the script's tool calls from 1. `arguments` is an object (sent as
 * its JSON) or a raw string sent exactly as given — `""`, malformed JSON,
 * `"null"` — default `"{}"`.
 *
 * @category models
 * @since 0.1.0
 */
export interface ScriptedToolCall {
  readonly id?: string | undefined
  readonly name: string
  readonly arguments?: string | Readonly<Record<string, unknown>> | undefined
}

/** The call as sent: its id (`call_<n>` for the `n`th tool call of the script when it has none) and raw arguments. */
export const render = (
  call: ScriptedToolCall,
  n: number
): { readonly id: string; readonly name: string; readonly arguments: string } => ({
  id: call.id ?? `call_${n}`,
  name: call.name,
  arguments:
    call.arguments === undefined
      ? "{}"
      : typeof call.arguments === "string"
        ? call.arguments
        : JSON.stringify(call.arguments)
})
