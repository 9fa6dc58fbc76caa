/**
 * A docs table names only fields its types have. A table is checked when an HTML comment above it names the
 * module its rows come from: `<!-- fields: packages/core/src/Chat.ts -->`. In each row:
 *
 * - with `<!-- fields: packages/core/src/Chat.ts#ChatOptions -->`, the names in backticks in each row's first cell
 *   are fields of that one type (a table of options);
 * - a first cell naming a type (`` `ToolCallReady` ``) has its `fields` column (when the table has one: the names in
 *   backticks, `` `step`, `toolCallId` ``) checked against the type's properties;
 * - a first cell naming a call (`` `reply(text, { usage?, finishReason? })` ``) has each `{ … }` of its arguments
 *   (also inside `[ … ]`, for a list of records) checked against the parameter at that place.
 *
 * A type is read from the parsed source: an interface (with what it extends), a type alias, a type literal, a
 * union or intersection of those, followed through the module's imports and re-exports. A name the check cannot
 * read is a failure too, so a table never passes unchecked.
 *
 * `node scripts/check-doc-fields.ts` prints each problem with its file and line and exits 1 when there is one.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { parseSync } from "oxc-parser"

const root = join(import.meta.dirname, "..")

/** One field a table names that its type does not have, or a name the check cannot read. */
export interface Problem {
  readonly file: string
  readonly line: number
  readonly message: string
}

interface Node {
  readonly type: string
  readonly [key: string]: unknown
}

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"

const nameOf = (node: unknown): string | undefined => {
  if (!isNode(node)) return undefined
  if (node.type === "Identifier") return node.name as string
  if (node.type === "Literal" && typeof node.value === "string") return node.value
  if (node.type === "TSQualifiedName") return nameOf(node.right)
  return undefined
}

const programs = new Map<string, ReadonlyArray<Node>>()

const bodyOf = (file: string): ReadonlyArray<Node> => {
  let body = programs.get(file)
  if (body === undefined) {
    body = (parseSync(file, readFileSync(file, "utf8")).program as unknown as { body: ReadonlyArray<Node> }).body
    programs.set(file, body)
  }
  return body
}

/** A declaration of `name` in `file` (a type, an interface, a function or a const), following imports. */
const declaration = (
  file: string,
  name: string,
  seen = new Set<string>()
): { file: string; node: Node } | undefined => {
  const key = `${file}#${name}`
  if (seen.has(key) || !existsSync(file)) return undefined
  seen.add(key)
  for (const statement of bodyOf(file)) {
    const declared =
      statement.type === "ExportNamedDeclaration" && isNode(statement.declaration) ? statement.declaration : statement
    if (
      (declared.type === "TSInterfaceDeclaration" ||
        declared.type === "TSTypeAliasDeclaration" ||
        declared.type === "FunctionDeclaration") &&
      nameOf(declared.id) === name
    ) {
      return { file, node: declared }
    }
    if (declared.type === "VariableDeclaration") {
      for (const declarator of declared.declarations as ReadonlyArray<Node>) {
        if (nameOf(declarator.id) === name) return { file, node: declarator }
      }
    }
  }
  for (const statement of bodyOf(file)) {
    const source = nameOf(statement.source)
    if (source === undefined || !source.startsWith(".")) continue
    const target = resolve(dirname(file), source)
    const specifiers = (statement.specifiers ?? []) as ReadonlyArray<Node>
    for (const specifier of specifiers) {
      const local = nameOf(specifier.local)
      const outer = specifier.type === "ExportSpecifier" ? nameOf(specifier.exported) : local
      const inner = specifier.type === "ImportSpecifier" ? nameOf(specifier.imported) : local
      if (outer === name && inner !== undefined) {
        const found = declaration(target, inner, seen)
        if (found !== undefined) return found
      }
    }
    if (statement.type === "ExportAllDeclaration" && statement.exported === null) {
      const found = declaration(target, name, seen)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** The property names of a type node in `file`, or a reason they cannot be read. */
const fieldsOf = (file: string, type: unknown, depth = 0): ReadonlySet<string> | string => {
  if (!isNode(type) || depth > 20) return "an unreadable type"
  switch (type.type) {
    case "TSTypeAnnotation":
      return fieldsOf(file, type.typeAnnotation, depth + 1)
    case "TSTypeLiteral":
      return new Set((type.members as ReadonlyArray<Node>).flatMap((member) => nameOf(member.key) ?? []))
    case "TSUnionType":
    case "TSIntersectionType": {
      const all = new Set<string>()
      for (const part of type.types as ReadonlyArray<Node>) {
        if (["TSUndefinedKeyword", "TSNullKeyword"].includes(part.type)) continue
        const fields = fieldsOf(file, part, depth + 1)
        if (typeof fields === "string") return fields
        for (const field of fields) all.add(field)
      }
      return all
    }
    case "TSTypeReference": {
      const name = nameOf(type.typeName) ?? ""
      const argumentsOf = (type.typeArguments as { params?: ReadonlyArray<Node> } | null)?.params ?? []
      if (["Readonly", "Partial", "Required"].includes(name) && argumentsOf[0] !== undefined) {
        return fieldsOf(file, argumentsOf[0], depth + 1)
      }
      const found = declaration(file, name)
      if (found === undefined) return `the type ${name} (not found from ${relative(root, file)})`
      return fieldsOfDeclaration(found.file, found.node, depth + 1)
    }
    default:
      return `a ${type.type}`
  }
}

const fieldsOfDeclaration = (file: string, node: Node, depth: number): ReadonlySet<string> | string => {
  if (node.type === "TSTypeAliasDeclaration") return fieldsOf(file, node.typeAnnotation, depth)
  if (node.type !== "TSInterfaceDeclaration") return `${nameOf(node.id)} (not a type)`
  const all = new Set(
    ((node.body as { body: ReadonlyArray<Node> }).body ?? []).flatMap((member) => nameOf(member.key) ?? [])
  )
  for (const heritage of (node.extends ?? []) as ReadonlyArray<Node>) {
    const name = nameOf(heritage.expression) ?? ""
    const found = declaration(file, name)
    if (found === undefined) return `${name}, which ${nameOf(node.id)} extends`
    const inherited = fieldsOfDeclaration(found.file, found.node, depth + 1)
    if (typeof inherited === "string") return inherited
    for (const field of inherited) all.add(field)
  }
  return all
}

/** The element type of a list type (`ReadonlyArray<X>`, `Array<X>`, `readonly X[]`), or the type itself. */
const elementOf = (type: unknown): unknown => {
  if (!isNode(type)) return type
  if (type.type === "TSTypeAnnotation") return elementOf(type.typeAnnotation)
  if (type.type === "TSTypeOperator") return elementOf(type.typeAnnotation)
  if (type.type === "TSArrayType") return type.elementType
  if (type.type === "TSTypeReference" && ["ReadonlyArray", "Array"].includes(nameOf(type.typeName) ?? "")) {
    return (type.typeArguments as { params: ReadonlyArray<Node> }).params[0]
  }
  return type
}

/** The parameters of a function declaration or of a const holding an arrow function. */
const parametersOf = (node: Node): ReadonlyArray<Node> | undefined => {
  const fn = node.type === "VariableDeclarator" ? node.init : node
  if (!isNode(fn) || !["ArrowFunctionExpression", "FunctionExpression", "FunctionDeclaration"].includes(fn.type)) {
    return undefined
  }
  return (fn.params as ReadonlyArray<Node>).map((param) =>
    param.type === "AssignmentPattern" ? (param.left as Node) : param
  )
}

/** Splits text at top-level commas (outside brackets, braces and parentheses). */
const topLevel = (text: string, separator = ","): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let current = ""
  for (const char of text) {
    if ("([{<".includes(char)) depth++
    if (")]}>".includes(char)) depth--
    if (char === separator && depth === 0) {
      parts.push(current.trim())
      current = ""
    } else current += char
  }
  if (current.trim() !== "") parts.push(current.trim())
  return parts
}

/** The names inside the first `{ … }` of an argument as the docs write it: `{ usage?, finishReason? }`. */
const namesInRecord = (argument: string): ReadonlyArray<string> | undefined => {
  const match = /^\[?\s*\{(.*)\}\s*\]?$/s.exec(argument.trim())
  if (match === null) return undefined
  return topLevel(match[1] as string).flatMap((part) => {
    const name = /^([A-Za-z_$][\w$]*)\??/.exec(part)?.[1]
    return name === undefined ? [] : [name]
  })
}

/** The cells of a table line, split at `|` outside backticks. */
const cells = (line: string): Array<string> => {
  const found: Array<string> = []
  let inCode = false
  let current = ""
  for (const char of line.trim().replace(/^\|/, "").replace(/\|$/, "")) {
    if (char === "`") inCode = !inCode
    if (char === "|" && !inCode) {
      found.push(current.trim())
      current = ""
    } else current += char
  }
  found.push(current.trim())
  return found
}

const codeSpans = (cell: string): Array<string> => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string)

/** The problems of one markdown file (`base` is where the module paths of its markers start). */
export const checkMarkdown = (file: string, text: string, base: string = root): ReadonlyArray<Problem> => {
  const lines = text.split("\n")
  const problems: Array<Problem> = []
  const at = (index: number, message: string) => problems.push({ file: relative(base, file), line: index + 1, message })
  for (let i = 0; i < lines.length; i++) {
    const marker = /<!--\s*fields:\s*(\S+)\s*-->/.exec(lines[i] as string)
    if (marker === null) continue
    const [path, typeName] = (marker[1] as string).split("#") as [string, string | undefined]
    const module = resolve(base, path)
    if (!existsSync(module)) {
      at(i, `the module ${path} does not exist`)
      continue
    }
    // `module#Type`: the first cell of each row names fields of that one type (an options table).
    let ofType: ReadonlySet<string> | undefined
    if (typeName !== undefined) {
      const found = declaration(module, typeName)
      const fields =
        found === undefined ? `${typeName} is not a type of ${path}` : fieldsOfDeclaration(found.file, found.node, 0)
      if (typeof fields === "string") {
        at(i, `cannot read the fields of ${typeName}: ${fields}`)
        continue
      }
      ofType = fields
    }
    let start = i + 1
    while (start < lines.length && (lines[start] as string).trim() === "") start++
    if (!(lines[start] ?? "").trim().startsWith("|")) {
      at(i, "no table follows the fields marker")
      continue
    }
    const header = cells(lines[start] as string).map((cell) => cell.toLowerCase())
    const fieldsColumn = header.indexOf("fields")
    for (let row = start + 2; row < lines.length && (lines[row] as string).trim().startsWith("|"); row++) {
      const rowCells = cells(lines[row] as string)
      if (ofType !== undefined) {
        for (const span of codeSpans(rowCells[0] ?? "")) {
          if (!ofType.has(span)) at(row, `${typeName} has no field "${span}" (it has ${[...ofType].join(", ")})`)
        }
        continue
      }
      for (const span of codeSpans(rowCells[0] ?? "")) {
        const call = /^([A-Za-z_$][\w$]*)\((.*)\)$/s.exec(span)
        if (call !== null) {
          const [, name, args] = call as unknown as [string, string, string]
          const found = declaration(module, name)
          const parameters = found === undefined ? undefined : parametersOf(found.node)
          if (found === undefined || parameters === undefined) {
            at(row, `${name} is not a function of ${path}`)
            continue
          }
          topLevel(args).forEach((argument, index) => {
            const names = namesInRecord(argument)
            if (names === undefined) return
            const parameter = parameters[index]
            if (parameter === undefined) {
              at(row, `${name} has no parameter ${index + 1} for ${argument}`)
              return
            }
            const type = argument.trim().startsWith("[")
              ? elementOf(parameter.typeAnnotation)
              : parameter.typeAnnotation
            const fields = fieldsOf(found.file, type)
            if (typeof fields === "string") {
              at(row, `cannot read the fields of ${name}'s parameter ${nameOf(parameter) ?? index + 1}: ${fields}`)
              return
            }
            for (const field of names) {
              if (!fields.has(field)) {
                at(
                  row,
                  `${name}'s ${nameOf(parameter) ?? `parameter ${index + 1}`} has no field "${field}" (it has ${[...fields].join(", ")})`
                )
              }
            }
          })
          continue
        }
        if (!/^[A-Z][\w$]*$/.test(span) || fieldsColumn === -1) continue
        const found = declaration(module, span)
        if (found === undefined) {
          at(row, `${span} is not a type of ${path}`)
          continue
        }
        const fields = fieldsOfDeclaration(found.file, found.node, 0)
        if (typeof fields === "string") {
          at(row, `cannot read the fields of ${span}: ${fields}`)
          continue
        }
        for (const field of codeSpans(rowCells[fieldsColumn] ?? "")) {
          if (!fields.has(field)) {
            at(row, `${span} has no field "${field}" (it has ${[...fields].filter((f) => f !== "_tag").join(", ")})`)
          }
        }
      }
    }
  }
  return problems
}

const markdownFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? [] : entry.name.endsWith(".md") ? [join(dir, entry.name)] : []
  )

/** Every problem in the README, the docs and each package's README. */
export const check = (base: string = root): ReadonlyArray<Problem> =>
  [
    join(base, "README.md"),
    ...(existsSync(join(base, "docs")) ? markdownFiles(join(base, "docs")) : []),
    ...(existsSync(join(base, "packages"))
      ? readdirSync(join(base, "packages")).map((name) => join(base, "packages", name, "README.md"))
      : [])
  ]
    .filter((file) => existsSync(file))
    .flatMap((file) => checkMarkdown(file, readFileSync(file, "utf8"), base))

const main = () => {
  const problems = check()
  for (const problem of problems) console.error(`${problem.file}:${problem.line}: ${problem.message}`)
  if (problems.length > 0) {
    console.error(`${problems.length} field(s) named in docs tables that their types do not have.`)
    process.exit(1)
  }
  console.log("Every field a checked docs table names is a field of its type.")
}

if (import.meta.main) main()
