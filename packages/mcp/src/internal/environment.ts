/**
 * The environment a stdio server inherits from its parent: what it needs to run and to reach the network (the
 * search path and home, temporary folders, locale, CA certificates, proxies), never a credential. A proxy URL
 * keeps its host and port but loses any `user:password@`; a variable whose name says it holds a credential, or
 * one of npm's `npm_config_*` settings (where npm keeps registry tokens), is never passed, whatever list it is on.
 * A server that needs a secret is given it in its `env` (or as its credential).
 */

/** Variables passed as they are (names compared without case: Windows spells `Path`). */
export const plainVariables: ReadonlyArray<string> = [
  // what the MCP SDK passes on its own (its POSIX and Windows defaults)
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "APPDATA",
  "HOMEDRIVE",
  "HOMEPATH",
  "LOCALAPPDATA",
  "PROCESSOR_ARCHITECTURE",
  "SYSTEMDRIVE",
  "SYSTEMROOT",
  "USERNAME",
  "USERPROFILE",
  "PROGRAMFILES",
  // where programs and temporary files are
  "PATHEXT",
  "COMSPEC",
  "WINDIR",
  "TMPDIR",
  "TMP",
  "TEMP",
  "XDG_CACHE_HOME",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_RUNTIME_DIR",
  // locale and time zone
  "LANG",
  "LANGUAGE",
  "TZ",
  // certificate authorities (a network behind a TLS-inspecting proxy needs its CA)
  "NODE_EXTRA_CA_CERTS",
  "NODE_USE_SYSTEM_CA",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  // proxies: which hosts bypass it, and Node's switch to honour the proxy variables
  "NO_PROXY",
  "NODE_USE_ENV_PROXY"
]

/** Proxy variables: passed with any `user:password@` taken out of the URL. */
export const proxyVariables: ReadonlyArray<string> = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]

/** Locale variables by prefix (`LC_ALL`, `LC_CTYPE`, …). */
const localePrefix = "LC_"

/** A name that says it holds a credential: never passed, whatever list it is on. */
const credentialName = /TOKEN|SECRET|PASSW(OR)?D|PASS$|CREDENTIAL|AUTH|API_?KEY|ACCESS_?KEY|PRIVATE|SESSION|COOKIE/i

/** Whether a variable of this name may never be passed (credential-named, or an npm setting). */
export const isSecretName = (name: string): boolean => credentialName.test(name) || /^npm_config_/i.test(name)

/** A proxy URL without its `user:password@`. */
export const withoutUserinfo = (value: string): string => value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/\s]*@/i, "$1")

const plain = new Set(plainVariables.map((name) => name.toUpperCase()))
const proxies = new Set(proxyVariables.map((name) => name.toUpperCase()))

/** The variables of `parent` a stdio server inherits (see the module doc). */
export const inherited = (parent: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const environment: Record<string, string> = {}
  for (const [name, value] of Object.entries(parent)) {
    // A shell function exported into the environment (`() { …`) is never passed, as the SDK does.
    if (value === undefined || value.startsWith("()") || isSecretName(name)) continue
    const upper = name.toUpperCase()
    if (proxies.has(upper)) environment[name] = withoutUserinfo(value)
    else if (plain.has(upper) || upper.startsWith(localePrefix)) environment[name] = value
  }
  return environment
}
