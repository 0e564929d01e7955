// Moving between views: the dashboard's state lives in the URL's hash
// (#/<view>?<params>), which app.js routes on; views call navigate.
// Changes the URL (and so the view) to view with params.
export function navigate(view, params) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ''));
  location.hash = `#/${view}${q.toString() ? '?' + q : ''}`;
}
