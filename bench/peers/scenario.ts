/**
 * What every framework's chat scenarios share: the shape a peer module
 * exports, the one tool (`get_weather({ city })`), and the model's script.
 *
 * Each framework is mocked at its own model boundary with a model that reads
 * the conversation it is given and answers instantly from this script: while
 * fewer than `toolCalls` tool results are in the conversation it asks for one
 * more `get_weather` call, then it answers with text. The reply depends only
 * on the conversation, so one agent serves every iteration and no queue of
 * replies grows while the benchmark runs. What is timed is the framework's
 * own loop: prompt building, tool lookup, argument parsing and validation, the
 * tool run, the message history and the result.
 */

/** The three chat scenarios, the same for every framework. */
export interface ChatScenarios {
  /** The label in tables, e.g. "Vercel AI SDK". */
  readonly name: string
  /**
   * The model asks for one tool, the framework runs it, the model answers.
   * Rejects unless the tool ran exactly once and the final text arrived.
   */
  readonly toolCallRun: () => Promise<void>
  /** One model call, no tool offered to run; rejects unless the text arrived and no tool ran. */
  readonly singleTurn: () => Promise<void>
  /**
   * `turns` tool calls in sequence, one per model step, then a final answer.
   * `onTurn` (if given) is called inside each tool run with the turn number
   * (1-based), for the memory probe. Rejects unless the tool ran `turns` times.
   */
  readonly multiTurn: (turns: number, onTurn?: (turn: number) => void) => Promise<void>
  /**
   * `turns` tool-call runs at once (each: tool call, tool run, answer), for
   * the cost curves. Rejects unless the tool ran `turns` times in all and
   * every run's final text arrived.
   */
  readonly concurrent: (turns: number) => Promise<void>
}

/** The tool's name, the same in every framework. */
export const toolName = "get_weather"
/** The tool's description. */
export const toolDescription = "Get the current weather for a city"
/** The user's message. */
export const prompt = "What is the weather in Paris?"
/** The model's final answer; every scenario checks it arrived. */
export const finalText = "It is sunny in Paris, 21 °C."
/** The arguments the model sends, as the JSON string a real model emits. */
export const toolArguments = JSON.stringify({ city: "Paris" })

/** What the tool returns. */
export interface Weather {
  readonly city: string
  readonly forecast: string
  readonly celsius: number
}

/**
 * A tool body with a run counter: `run` is what each framework's tool calls,
 * `reset` starts a scenario run, `expect` checks the count at its end.
 */
export const counter = (framework: string) => {
  let runs = 0
  let onTurn: ((turn: number) => void) | undefined
  return {
    run: (city: string): Weather => {
      runs += 1
      onTurn?.(runs)
      return { city, forecast: "sunny", celsius: 21 }
    },
    reset: (probe?: (turn: number) => void): void => {
      runs = 0
      onTurn = probe
    },
    expect: (scenario: string, expected: number, text: string | undefined): void => {
      onTurn = undefined
      if (runs !== expected) {
        throw new Error(`${framework} ${scenario}: the tool ran ${runs} times, expected ${expected}`)
      }
      if (text !== finalText) {
        throw new Error(
          `${framework} ${scenario}: final text was ${JSON.stringify(text)}, expected the script's answer`
        )
      }
    }
  }
}

/** A tool body with a run counter (see {@link counter}). */
export type Counter = ReturnType<typeof counter>

/**
 * A framework's three scenarios from its one chat run: `chat(toolCalls,
 * maxSteps)` runs the framework's loop on `promptFor(toolCalls)`, allowing
 * `maxSteps` model calls (a framework that counts otherwise may ignore it),
 * and resolves to the final text; `weather` is the counter its tool runs.
 */
export const scenariosOf = (
  name: string,
  weather: Counter,
  chat: (toolCalls: number, maxSteps: number) => Promise<string | undefined>
): ChatScenarios => ({
  name,
  toolCallRun: async () => {
    weather.reset()
    weather.expect("toolCallRun", 1, await chat(1, 2))
  },
  singleTurn: async () => {
    weather.reset()
    weather.expect("singleTurn", 0, await chat(0, 1))
  },
  multiTurn: async (turns, onTurn) => {
    weather.reset(onTurn)
    weather.expect("multiTurn", turns, await chat(turns, turns + 1))
  },
  concurrent: async (turns) => {
    weather.reset()
    const texts = await Promise.all(Array.from({ length: turns }, () => chat(1, 2)))
    weather.expect("concurrent", turns, texts.every((text) => text === finalText) ? finalText : undefined)
  }
})

// ---------------------------------------------------------------------------
// The gate at the model, for the heap of turns in flight.
// ---------------------------------------------------------------------------

interface Held {
  readonly expected: number
  arrived: number
  readonly released: Promise<void>
  readonly allArrived: () => void
}

let held: Held | undefined

/**
 * What every fake model calls first: `undefined` (answer at once) unless a
 * gate is held by {@link holdAtModel}; then it counts the call in and
 * returns the promise to wait on before answering.
 */
export const atModel = (): Promise<void> | undefined => {
  if (held === undefined) return undefined
  held.arrived += 1
  if (held.arrived === held.expected) held.allArrived()
  return held.released
}

/**
 * Holds every model call at {@link atModel} until `release()`: `arrived`
 * resolves when `expected` calls are waiting, so a probe can read the heap
 * while that many turns are in flight. One gate at a time; `release` ends
 * it, and later model calls answer at once again.
 */
export const holdAtModel = (expected: number): { readonly arrived: Promise<void>; readonly release: () => void } => {
  if (held !== undefined) throw new Error("a gate is already held")
  let allArrived!: () => void
  let release!: () => void
  const arrived = new Promise<void>((resolve) => {
    allArrived = resolve
  })
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  held = { expected, arrived: 0, released, allArrived }
  return {
    arrived,
    release: () => {
      held = undefined
      release()
    }
  }
}

/** The model's next move, from the number of tool results it has seen. */
export type Move = { readonly _tag: "CallTool"; readonly id: string } | { readonly _tag: "Answer" }

/**
 * The script: call the tool until `toolCalls` results are in the
 * conversation, then answer. Tool call ids are `call_<n>`, unique in a run.
 */
export const nextMove = (toolResultsSeen: number, toolCalls: number): Move =>
  toolResultsSeen < toolCalls ? { _tag: "CallTool", id: `call_${toolResultsSeen + 1}` } : { _tag: "Answer" }

/**
 * How many tool calls a run asks for, read from the user's message, so that
 * one stateless model serves all three scenarios: the scenario appends
 * `#calls=N` to the prompt.
 */
export const promptFor = (toolCalls: number): string => `${prompt} #calls=${toolCalls}`

/** Reads `#calls=N` back from the first user message (0 when absent). */
export const toolCallsIn = (userText: string): number => {
  const match = /#calls=(\d+)/.exec(userText)
  return match === null ? 0 : Number(match[1])
}

// ---------------------------------------------------------------------------
// The streamed turn.
// ---------------------------------------------------------------------------

/** Text deltas in the fake stream of the streamed turn. */
export const streamDeltas = 100

/** The fake stream's text pieces: `streamDeltas` words whose concatenation is the streamed answer. */
export const streamPieces: ReadonlyArray<string> = Array.from({ length: streamDeltas }, (_, i) => `w${i} `)

/** The streamed answer, whole. */
export const streamedText = streamPieces.join("")

/**
 * A framework's streamed turn: the model streams {@link streamPieces} at once
 * (no tool call), and the framework's own streaming API hands each text delta
 * to the caller. `run(onFirstDelta)` calls `onFirstDelta` when the first text
 * delta reaches the caller and resolves when the turn is over; it rejects
 * unless exactly `streamDeltas` deltas arrived and they join to the answer.
 */
export interface StreamScenario {
  readonly name: string
  readonly run: (onFirstDelta: () => void) => Promise<void>
}

/** A delta counter for one streamed run: `delta` is called per text delta, `expect` at the end. */
export const deltaCounter = (framework: string, onFirstDelta: () => void) => {
  let text = ""
  let count = 0
  return {
    delta: (piece: string): void => {
      if (count === 0) onFirstDelta()
      count += 1
      text += piece
    },
    expect: (): void => {
      if (count !== streamDeltas || text !== streamedText) {
        throw new Error(`${framework} streamed turn: ${count} deltas, expected ${streamDeltas} joining to the answer`)
      }
    }
  }
}
