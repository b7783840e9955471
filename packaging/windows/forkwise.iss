; Inno Setup 6 script: a per-user or machine-wide installer over the PyInstaller one-folder
; build (dist\forkwise\, made by packaging\forkwise.spec). NOT BUILT OR TESTED on the Linux
; development machine: see packaging\README.md, "Windows".
;
;   pyinstaller --noconfirm --distpath dist --workpath build\pyinstaller packaging\forkwise.spec
;   for /f %v in ('python packaging\project_version.py') do set FW_VERSION=%v
;   for /f %v in ('python packaging\project_version.py --windows') do set FW_WINVERSION=%v
;   iscc /DAppVersion=%FW_VERSION% /DWinVersion=%FW_WINVERSION% packaging\windows\forkwise.iss
;
; -> dist\forkwise-<version>-setup.exe. Relative paths below are relative to this file.

#ifndef AppVersion
  #error Pass the version from pyproject.toml: iscc /DAppVersion=X.Y.Z /DWinVersion=X.Y.Z.0 forkwise.iss
#endif
#ifndef WinVersion
  #define WinVersion "0.0.0.0"
#endif

[Setup]
AppId={{6F7C2B1E-3D4A-4E8B-9C55-2A1F0B7D9E41}
AppName=Forkwise
AppVersion={#AppVersion}
AppVerName=Forkwise {#AppVersion}
AppPublisher=Forkwise
VersionInfoVersion={#WinVersion}
DefaultDirName={autopf}\Forkwise
DefaultGroupName=Forkwise
DisableProgramGroupPage=yes
; Install for the current user without admin rights, or for everyone when elevated.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=forkwise-{#AppVersion}-setup
SetupIconFile=..\..\resources\icons\forkwise.ico
UninstallDisplayIcon={app}\forkwise.exe
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ChangesEnvironment=no

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
; The whole bundle: forkwise.exe (GUI), forkwise-cli.exe (console: `sessions …`, --version), _internal\.
Source: "..\..\dist\forkwise\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\Forkwise"; Filename: "{app}\forkwise.exe"; IconFilename: "{app}\forkwise.exe"
Name: "{autodesktop}\Forkwise"; Filename: "{app}\forkwise.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\forkwise.exe"; Description: "{cm:LaunchProgram,Forkwise}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Nothing the app writes lives under {app}; sessions and settings stay in the user's profile.
Type: dirifempty; Name: "{app}"
