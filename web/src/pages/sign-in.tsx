import { useState } from "preact/hooks";
import { ApiError, api } from "../api.ts";

/**
 * The admin token, POSTed once for an HttpOnly session cookie; never put in a URL or kept.
 *
 * @example
 * ```tsx
 * <SignIn onSignedIn={(csrf) => setCsrfToken(csrf)} />
 * ```
 */
export function SignIn(props: { onSignedIn: (csrfToken: string) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem("token") as HTMLInputElement;
    setBusy(true);
    setError(null);
    try {
      const session = await api<{ csrfToken: string }>("session", {
        method: "POST",
        body: { token: input.value },
      });
      input.value = "";
      props.onSignedIn(session.csrfToken);
    } catch (failure) {
      setError(
        failure instanceof ApiError ? `${failure.code}: ${failure.message}` : String(failure),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="sign-in card" method="post" onSubmit={submit}>
      <h1>hookinbox</h1>
      <label>
        Admin token
        <input name="token" type="password" autocomplete="current-password" required />
      </label>
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p class="muted">The token is exchanged for a session cookie (12 hours).</p>
    </form>
  );
}
