/**
 * The messages of a request as every provider is sent them: no message has
 * text that is empty or only whitespace, which Anthropic-style back ends
 * refuse ("text content blocks must be non-empty") and which would leave a
 * thread that can never be continued.
 *
 * - An assistant message's text beside tool calls, when blank, is sent as no
 *   text (`""`; the chat completions dialect writes `null`).
 * - An assistant message with no tool calls and blank text (an empty final
 *   answer kept in a thread) is left out, and so is a blank user or system
 *   message.
 * - A blank tool result is sent as {@link emptyToolResult}: every call keeps
 *   exactly one tool message, and what the caller got is unchanged.
 *
 * A request with nothing to change is returned as it is (no copy).
 */
import type * as Prompt from "../../Prompt.ts"

/** What a tool message whose result is empty or only whitespace says instead. */
export const emptyToolResult = "(the tool returned no output)"

const blank = (text: string): boolean => text.trim() === ""

const needsChange = (message: Prompt.Message): boolean =>
  blank(message.content) &&
  !(message.role === "assistant" && message.content === "" && (message.toolCalls?.length ?? 0) > 0)

/** `messages` with no blank text (see the module's header); the same array when none has any. */
export const sendable = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<Prompt.Message> => {
  if (!messages.some(needsChange)) return messages
  const out: Array<Prompt.Message> = []
  for (const message of messages) {
    if (!needsChange(message)) {
      out.push(message)
      continue
    }
    switch (message.role) {
      case "assistant":
        if ((message.toolCalls?.length ?? 0) > 0) out.push({ ...message, content: "" })
        break
      case "tool":
        out.push({ ...message, content: emptyToolResult })
        break
      default:
        break
    }
  }
  return out
}
