/** A strong admin token for tests (weak ones are refused at boot: HOOKINBOX_ADMIN_TOKEN_WEAK). */
export const testAdminToken = "test-admin-token-7f3a9c2e5b8d1046af";
