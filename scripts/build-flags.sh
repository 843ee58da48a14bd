# scripts/build-flags.sh — how the builds are configured, sourced by
# scripts/build.sh (vanilla, patched, cassert) and scripts/layering.sh (its
# two builds, configured like patched).  One file, so that the two cannot
# drift apart.

# Identical for the two -O2 builds so that they compare fairly.  No ICU and no
# readline: fewer run-time dependencies, so installs travel to other machines.
# --enable-depend: without it make does not see header changes, and an edit
# of a header in build/src would leave objects compiled against the old one.
COMMON_FLAGS=(--without-icu --without-readline --enable-debug --enable-depend)
O2_CFLAGS=${O2_CFLAGS:--O2}
# Relocatable: no absolute rpath (--disable-rpath) but one relative to each
# binary, so that an install copied anywhere finds its own libpq.  Entries:
# bin/* and lib/*.so look in ../lib; the modules in lib/postgresql/ in ..
# (lib/); the test drivers in lib/postgresql/pgxs/src/test/*/ five levels up
# (four where the prefix names postgres and pkglibdir is lib itself).
# PostgreSQL finds share/ and lib/ relative to bin/ by itself.  \$$ is for
# make (-> \$) and then the shell of each link command (-> $); configure's
# own test links only see a harmless literal.
RPATH_FLAGS=(--disable-rpath
	'LDFLAGS=-Wl,-rpath,\$$ORIGIN/../lib:\$$ORIGIN/..:\$$ORIGIN/../../../../..:\$$ORIGIN/../../../..')
CASSERT_FLAGS=(--enable-cassert --enable-tap-tests --enable-injection-points)
CASSERT_CFLAGS=${CASSERT_CFLAGS:--O2}
