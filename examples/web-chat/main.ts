/**
 * The Rolecraft web chat: a page that streams a chat turn as it happens —
 * the answer's text as it arrives, each tool call as it starts and finishes —
 * and asks you to approve or reject a booking before it runs.
 *
 * Without `OPENAI_API_KEY` the model is the offline scripted one (a local
 * OpenAI-compatible endpoint streaming through the real `openai` SDK); with
 * it, a real model (`OPENAI_BASE_URL`, `OPENAI_MODEL` optional).
 *
 * The conversation is kept in a thread on the server (`agent.chatStream(input,
 * { thread })`): reload the page and it is still there. In memory by
 * default; set `THREADS_DB` to a file name to keep threads in SQLite across
 * restarts of the server.
 *
 * Run: npm run web-chat   (or: node examples/web-chat/main.ts; PORT=3000 by default)
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import * as WebChat from "./server.ts"

const port = Number(process.env.PORT ?? 3000)

const program = Effect.gen(function* () {
  const chat = yield* WebChat.start({ port, threadsFile: process.env.THREADS_DB })
  yield* Console.log(`Rolecraft web chat: ${chat.url}`)
  yield* Console.log(`model: ${chat.model.description}`)
  yield* Console.log("Ctrl-C to stop.")
  return yield* Effect.never
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
