import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, onSignedOut, setCsrfToken } from "./api.ts";
import { DeadLetters } from "./pages/dead-letters.tsx";
import { EventDetailPage } from "./pages/event-detail.tsx";
import { Events } from "./pages/events.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { Rejected } from "./pages/rejected.tsx";
import { SignIn } from "./pages/sign-in.tsx";
import "./style.css";

/** The hash route: `#/events/evt_…?x=1` → `{ path: "/events/evt_…", params }`. */
function currentRoute() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const at = hash.indexOf("?");
  return {
    path: at === -1 ? hash : hash.slice(0, at),
    params: new URLSearchParams(at === -1 ? "" : hash.slice(at + 1)),
  };
}

const nav = [
  ["/", "Overview"],
  ["/events", "Events"],
  ["/dead", "Dead letters & stuck"],
  ["/rejected", "Rejected"],
] as const;

function Page(props: { path: string; params: URLSearchParams }) {
  const { path, params } = props;
  const detail = /^\/events\/([^/]+)$/.exec(path);
  if (detail) return <EventDetailPage id={decodeURIComponent(detail[1]!)} />;
  if (path === "/events") return <Events params={params} />;
  if (path === "/dead") return <DeadLetters />;
  if (path === "/rejected") return <Rejected params={params} />;
  return <OverviewPage />;
}

function App() {
  const [state, setState] = useState<"checking" | "in" | "out">("checking");
  const [route, setRoute] = useState(currentRoute);

  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    window.addEventListener("hashchange", changed);
    onSignedOut(() => {
      setCsrfToken(null);
      setState("out");
    });
    api<{ csrfToken: string }>("session")
      .then((session) => {
        setCsrfToken(session.csrfToken);
        setState("in");
      })
      .catch(() => setState("out"));
    return () => window.removeEventListener("hashchange", changed);
  }, []);

  if (state === "checking") return <p class="muted pad">Loading…</p>;
  if (state === "out")
    return (
      <SignIn
        onSignedIn={(csrf) => {
          setCsrfToken(csrf);
          setState("in");
        }}
      />
    );

  const signOut = async () => {
    try {
      await api("session", { method: "DELETE" });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
    setCsrfToken(null);
    setState("out");
  };

  const section = route.path.startsWith("/events") ? "/events" : route.path;
  return (
    <div class="shell">
      <header>
        <strong class="brand">hookinbox</strong>
        <nav>
          {nav.map(([path, label]) => (
            <a href={`#${path}`} class={section === path ? "active" : ""}>
              {label}
            </a>
          ))}
        </nav>
        <button type="button" class="link" onClick={signOut} data-testid="sign-out">
          Sign out
        </button>
      </header>
      <main>
        <Page path={route.path} params={route.params} />
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
