/**
 * 运行详情 · 用其他版本重跑: the run's question again with another published version of its agent,
 * as the run's owner. As in 运行调试, the owner's token goes with the request to the staff-only
 * console endpoint, which verifies it is the run owner's own and starts the run for them; the
 * token lives only in the password field and this request, and is cleared on success and on
 * pagehide. Server text is shown with textContent only.
 */

const root = document.querySelector("[data-rerun]");
const form = document.getElementById("rerun-form");
const tokenInput = /** @type {HTMLInputElement} */ (document.getElementById("rerun-token"));
const versionSelect = /** @type {HTMLSelectElement} */ (document.getElementById("rerun-version"));
const button = /** @type {HTMLButtonElement} */ (document.getElementById("rerun-start"));
const errorNode = document.getElementById("rerun-error");

function showError(message) {
  errorNode.textContent = message;
  errorNode.hidden = !message;
}

function messageFor(status, problem) {
  if (problem?.code === "RESOURCE_NOT_FOUND") return root.dataset.notOwner;
  const detail = typeof problem?.detail === "string" && problem.detail ? problem.detail : `HTTP ${status}`;
  return root.dataset.failed + detail;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  showError("");
  const token = tokenInput.value.trim();
  if (!token) return showError(root.dataset.needToken);
  const csrf = form.querySelector("[name=csrfmiddlewaretoken]").value;
  button.disabled = true;
  try {
    const response = await fetch(root.dataset.rerunUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf, Accept: "application/json" },
      body: new URLSearchParams({ token, version: versionSelect.value }),
    });
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    if (response.status === 201 && typeof data?.id === "string") {
      tokenInput.value = "";
      window.location.assign(root.dataset.runUrl.replace("RUN_ID", encodeURIComponent(data.id)));
      return;
    }
    showError(messageFor(response.status, data));
  } catch (error) {
    showError(root.dataset.failed + String(error?.message ?? error));
  } finally {
    button.disabled = false;
  }
});

window.addEventListener("pagehide", () => {
  tokenInput.value = "";
});
