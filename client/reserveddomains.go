package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/sluicehq/sluice/apiwire"
)

// DeleteReservedDomainCertPolicy stops the management of the certificate of the
// reserved domain id (DELETE /reserved_domains/{id}/certificate_management_policy).
func (c *Client) DeleteReservedDomainCertPolicy(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, apiwire.ReservedDomainsPath+"/"+url.PathEscape(id)+"/certificate_management_policy", nil, nil)
}
