/**
 * LangChain.js's chat scenarios: `createAgent` from `langchain` v1 (its
 * LangGraph ReAct loop) with one `tool()`, over a fake chat model: a small
 * `BaseChatModel` subclass that answers from the shared script and supports
 * `bindTools`.
 *
 * Why not the library's own fakes: `fakeModel()` (`@langchain/core/testing`)
 * consumes a FIFO queue and records every call, so the queue and the record
 * grow with each iteration; `FakeListChatModel` answers with text only; and
 * `FakeStreamingChatModel` always answers with its first response. The
 * subclass below mirrors `fakeModel()`'s `_generate`/`bindTools` minus the
 * queue and the record.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models"
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import type { ChatResult } from "@langchain/core/outputs"
import { createAgent, tool } from "langchain"
import { z } from "zod"
import {
  atModel,
  type ChatScenarios,
  counter,
  finalText,
  nextMove,
  promptFor,
  scenariosOf,
  toolCallsIn,
  toolDescription,
  toolName
} from "./scenario.ts"

const userText = (messages: ReadonlyArray<BaseMessage>): string => {
  for (const message of messages) {
    if (HumanMessage.isInstance(message)) return message.text
  }
  return ""
}

/** A chat model answering from the script, reading only the messages it is given. */
class ScriptedChatModel extends BaseChatModel {
  _llmType(): string {
    return "scripted"
  }

  // createAgent binds the tools; the script already knows which tool to call
  override bindTools(): ReturnType<BaseChatModel["withConfig"]> {
    return this.withConfig({})
  }

  async _generate(messages: Array<BaseMessage>): Promise<ChatResult> {
    const gate = atModel()
    if (gate !== undefined) await gate
    const seen = messages.filter((message) => message.type === "tool").length
    const move = nextMove(seen, toolCallsIn(userText(messages)))
    const message =
      move._tag === "CallTool"
        ? new AIMessage({
            content: "",
            tool_calls: [{ id: move.id, name: toolName, args: { city: "Paris" }, type: "tool_call" }]
          })
        : new AIMessage({ content: finalText })
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] }
  }
}

const weather = counter("LangChain.js")
const agent = createAgent({
  model: new ScriptedChatModel({}),
  systemPrompt: "Answer questions about the weather.",
  tools: [
    tool(async ({ city }: { readonly city: string }) => weather.run(city), {
      name: toolName,
      description: toolDescription,
      schema: z.object({ city: z.string() })
    })
  ]
})

const chat = async (toolCalls: number): Promise<string | undefined> => {
  // LangGraph counts supersteps (one per model call and one per tool node): 2 per tool call, plus the answer, plus slack
  const state = await agent.invoke(
    { messages: [new HumanMessage(promptFor(toolCalls))] },
    { recursionLimit: 2 * toolCalls + 5 }
  )
  const last = state.messages.at(-1)
  return last === undefined ? undefined : last.text
}

export const scenarios: ChatScenarios = scenariosOf("LangChain.js", weather, chat)
