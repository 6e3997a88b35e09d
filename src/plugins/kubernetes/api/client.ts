// createClient: resolves the connection settings (kubeconfig.ts) and returns the ApiClient over
// node:http(s) (http-client.ts). The contract and its errors are in api.ts.

import type { ClientOptions } from "./api.ts";
import { HttpClient, type HttpClientOptions } from "./http-client.ts";
import { loadKubeConfig } from "./kubeconfig.ts";

/** Loads the connection settings for these options and returns a client over them. Throws a
 * KubeError (CONFIG) when the settings are unusable. */
export function createClient(o: ClientOptions, http: HttpClientOptions = {}): HttpClient {
  return new HttpClient(loadKubeConfig(o), http);
}
