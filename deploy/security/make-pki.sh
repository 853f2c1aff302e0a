#!/usr/bin/env bash
# make-pki.sh: the DDS Security files for the Atom mission executive, from your own CA.
#
#   deploy/security/make-pki.sh OUTDIR [NAME[:ROLE] ...]
#
# NAME is an identity (the certificate's CN), ROLE one of the templates in permissions/
# (executive, operator, monitor); ROLE defaults to NAME. Without names: executive operator
# monitor. Run it on the machine that keeps the CA (not the robot). It creates, in OUTDIR:
#
#   private/ca.key            the CA's private key: keep it here, offline; never copy it
#   ca.pem                    the CA certificate (Identity CA and Permissions CA)
#   governance.p7s            governance.xml signed by the CA
#   NAME.pem, NAME.key        NAME's identity certificate and private key (mode 600)
#   NAME.permissions.p7s      permissions/ROLE.xml for NAME, signed by the CA
#   NAME.security.xml         a CycloneDDS <Security> fragment naming the files above
#
# A CA or an identity that already exists in OUTDIR is kept (run it again to add people);
# the governance and every permissions document are signed afresh each time.
#
# Environment:
#   ATOM_PKI_PREFIX      where the files will be installed, written into NAME.security.xml
#                        (default: OUTDIR itself), e.g. /etc/atom-executive/security
#   ATOM_PKI_ORG         O= of every subject (default: "Atom executive")
#   ATOM_PKI_DAYS        validity of identities and permissions (default 730); CA: 10 years
#
# It needs bash, GNU date and openssl, not CycloneDDS: the CA's machine can be any Debian box.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "make-pki.sh: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: make-pki.sh OUTDIR [NAME[:ROLE] ...]"
out="$1"; shift
[ $# -ge 1 ] || set -- executive operator monitor
org="${ATOM_PKI_ORG:-Atom executive}"
days="${ATOM_PKI_DAYS:-730}"
command -v openssl >/dev/null || die "openssl is missing (apt-get install openssl)"
# CycloneDDS splits subject names on , / | and compares them literally: keep names plain.
[[ "$org" =~ ^[A-Za-z0-9\ ._-]+$ ]] || die "ATOM_PKI_ORG: letters, digits, space . _ - only"
[[ "$days" =~ ^[0-9]+$ ]] || die "ATOM_PKI_DAYS: a number of days"

mkdir -p "$out/private"
chmod 700 "$out/private"
out="$(cd "$out" && pwd)"
prefix="${ATOM_PKI_PREFIX:-$out}"
umask 077

# -- the CA: one EC P-256 key, self-signed; both Identity CA and Permissions CA ------------
if [ ! -e "$out/private/ca.key" ]; then
  [ ! -e "$out/ca.pem" ] || die "$out/ca.pem exists without private/ca.key: not making a second CA"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$out/private/ca.key"
  openssl req -x509 -new -sha256 -days 3650 -key "$out/private/ca.key" \
    -subj "/O=$org/CN=$org CA" -out "$out/ca.pem"
  echo "created the CA: $out/ca.pem (key: $out/private/ca.key)"
fi
[ -e "$out/ca.pem" ] || die "$out/private/ca.key exists but $out/ca.pem does not"
chmod 644 "$out/ca.pem"

sign() {  # sign XML as S/MIME with the CA, the form CycloneDDS verifies against PermissionsCA
  openssl smime -sign -text -in "$1" -out "$2" \
    -signer "$out/ca.pem" -inkey "$out/private/ca.key"
  chmod 644 "$2"
}

sign "$here/governance.xml" "$out/governance.p7s"

iso() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S; }  # openssl's date -> the permissions' format

for spec in "$@"; do
  name="${spec%%:*}"
  role="${spec#*:}"
  [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "$name: names are letters, digits, . _ - only"
  template="$here/permissions/$role.xml"
  [ -e "$template" ] || die "$spec: no permissions template $template"

  # -- identity: key, then a certificate signed by the CA ----------------------------------
  if [ ! -e "$out/$name.key" ]; then
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$out/$name.key"
    openssl req -new -key "$out/$name.key" -subj "/O=$org/CN=$name" |
      openssl x509 -req -sha256 -days "$days" -CA "$out/ca.pem" -CAkey "$out/private/ca.key" \
        -CAcreateserial -CAserial "$out/private/ca.srl" -out "$out/$name.pem" \
        -extfile <(printf 'basicConstraints=critical,CA:FALSE\n')
    echo "created identity $name ($role)"
  fi
  chmod 600 "$out/$name.key"
  chmod 644 "$out/$name.pem"

  # -- permissions: the role's template for this subject, valid as long as the certificate --
  subject="$(openssl x509 -in "$out/$name.pem" -noout -subject -nameopt RFC2253)"
  subject="${subject#subject=}"
  not_before="$(iso "$(openssl x509 -in "$out/$name.pem" -noout -startdate | cut -d= -f2)")"
  not_after="$(iso "$(openssl x509 -in "$out/$name.pem" -noout -enddate | cut -d= -f2)")"
  sed -e "s|@NAME@|$name|g" -e "s|@SUBJECT@|$subject|g" \
    -e "s|@NOT_BEFORE@|$not_before|g" -e "s|@NOT_AFTER@|$not_after|g" \
    "$template" >"$out/$name.permissions.xml"
  sign "$out/$name.permissions.xml" "$out/$name.permissions.p7s"
  rm "$out/$name.permissions.xml"

  # -- the CycloneDDS fragment: add it to CYCLONEDDS_URI, or paste it into your config ------
  # The plugins by their short names (CycloneDDS's defaults): Debian's libddsc looks for
  # lib<name>.so in /usr/lib/<multiarch>/libddsc0debian/, on any architecture.
  cat >"$out/$name.security.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- DDS Security for "$name" ($role), made by deploy/security/make-pki.sh: every participant
     this process creates authenticates as $name. -->
<CycloneDDS xmlns="https://cdds.io/config">
  <Domain Id="any">
    <Security>
      <Authentication>
        <Library path="dds_security_auth" initFunction="init_authentication" finalizeFunction="finalize_authentication"/>
        <IdentityCA>file:$prefix/ca.pem</IdentityCA>
        <IdentityCertificate>file:$prefix/$name.pem</IdentityCertificate>
        <PrivateKey>file:$prefix/$name.key</PrivateKey>
      </Authentication>
      <AccessControl>
        <Library path="dds_security_ac" initFunction="init_access_control" finalizeFunction="finalize_access_control"/>
        <PermissionsCA>file:$prefix/ca.pem</PermissionsCA>
        <Governance>file:$prefix/governance.p7s</Governance>
        <Permissions>file:$prefix/$name.permissions.p7s</Permissions>
      </AccessControl>
      <Cryptographic>
        <Library path="dds_security_crypto" initFunction="init_crypto" finalizeFunction="finalize_crypto"/>
      </Cryptographic>
    </Security>
  </Domain>
</CycloneDDS>
EOF
  chmod 644 "$out/$name.security.xml"
done
echo "done: $out"
